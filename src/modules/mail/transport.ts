import { randomBytes } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import nodemailer from 'nodemailer';
import type { Config } from '../../config.js';
import { linksIn } from './links.js';

/** One message as it leaves the service: both parts, in the recipient's language. */
export interface OutgoingMail {
  to: string;
  locale: string;
  subject: string;
  text: string;
  html: string;
}

export interface SendResult {
  messageId: string;
  /** The `.eml` file written by the development fallback. */
  file?: string;
}

export interface MailTransport {
  /** `smtp`, `file` for the development fallback, or `disabled` (MAIL_DISABLED=1: nothing is sent). */
  readonly kind: 'smtp' | 'file' | 'disabled';
  /** @throws the transport's error (refused connection, rejected recipient…) */
  send(mail: OutgoingMail): Promise<SendResult>;
  close(): void;
}

export interface MailLog {
  info(object: object, message: string): void;
  warn(object: object, message: string): void;
}

export { linksIn } from './links.js';

/** The mail headers of every message (RFC 5322), as nodemailer takes them. */
function composed(config: Config, mail: OutgoingMail) {
  return {
    from: config.MAIL_FROM,
    to: mail.to,
    subject: mail.subject,
    text: mail.text,
    html: mail.html,
    headers: {
      // RFC 3282: the language of the message, for the recipient's client and screen reader.
      'Content-Language': mail.locale,
      // RFC 3834 §5: sent by a machine; auto-responders should not answer it.
      'Auto-Submitted': 'auto-generated',
    },
  };
}

/**
 * Nodemailer over SMTP_URL: `smtp://` upgrades with STARTTLS when the server offers it, `smtps://`
 * is TLS from the start. Each send is one connection (messages are few; a pool would hold sockets
 * open for nothing). The timeouts are shorter than the worker's lease, so a send that hangs is
 * given up on before another instance may claim the message again.
 */
function smtpTransport(config: Config, url: string): MailTransport {
  const transporter = nodemailer.createTransport({
    url,
    connectionTimeout: 20_000,
    greetingTimeout: 20_000,
    socketTimeout: 60_000,
  });
  return {
    kind: 'smtp',
    async send(mail) {
      const info = await transporter.sendMail(composed(config, mail));
      return { messageId: info.messageId };
    },
    close: () => transporter.close(),
  };
}

/**
 * The development fallback: each message as an RFC 5322 file (CRLF line ends) in DATA_DIR/outbox/,
 * and its links logged, so a developer can follow a verification or reset link without a mail
 * server. A production server does not start without SMTP_URL (assertServable); should the fallback
 * run there anyway (the CLI's `mail test`), it logs the file only: the links carry live tokens, and
 * logs travel further than the database.
 */
function fileTransport(config: Config, log: MailLog): MailTransport {
  const directory = path.join(config.DATA_DIR, 'outbox');
  const transporter = nodemailer.createTransport({ streamTransport: true, buffer: true, newline: 'windows' });
  return {
    kind: 'file',
    async send(mail) {
      const info = await transporter.sendMail(composed(config, mail));
      await mkdir(directory, { recursive: true });
      // Sortable by time, and unique among messages written in the same millisecond.
      const stamp = new Date().toISOString().replace(/[:.]/g, '-');
      const file = path.join(directory, `${stamp}-${randomBytes(4).toString('hex')}.eml`);
      await writeFile(file, info.message as Buffer, { mode: 0o600 });
      if (config.NODE_ENV === 'production')
        log.info({ file }, 'mail: no SMTP_URL, so the message was written to a file');
      else
        log.info(
          { file, links: linksIn(mail.text) },
          'mail: no SMTP_URL, so the message was written to a file (its links are logged for development)',
        );
      return { messageId: info.messageId, file };
    },
    close: () => transporter.close(),
  };
}

/** A send refused for good, whatever the next attempt: the outbox gives the message up at once. */
export class MailNotSendable extends Error {
  override name = 'MailNotSendable';
}

/** MAIL_DISABLED=1: every send is refused for good, so each message is recorded as given up. */
function disabledTransport(): MailTransport {
  return {
    kind: 'disabled',
    send: async () => {
      throw new MailNotSendable('not sent: e-mail is turned off (MAIL_DISABLED=1)');
    },
    close: () => undefined,
  };
}

export function createMailTransport(config: Config, log: MailLog): MailTransport {
  if (config.MAIL_DISABLED) return disabledTransport();
  return config.SMTP_URL ? smtpTransport(config, config.SMTP_URL) : fileTransport(config, log);
}

/** What the start logs about mail: a warning when mail is turned off, or not sent in production. */
export function startupMailWarning(
  config: Pick<Config, 'NODE_ENV' | 'SMTP_URL'> & Partial<Pick<Config, 'MAIL_DISABLED'>>,
): string | undefined {
  if (config.MAIL_DISABLED)
    return 'MAIL_DISABLED=1: no e-mail is sent; each message is recorded as given up (idp mail outbox --failed)';
  if (config.NODE_ENV !== 'production' || config.SMTP_URL) return undefined;
  return 'SMTP_URL is not set: e-mail is written to DATA_DIR/outbox/ instead of being sent';
}

/**
 * An error as the outbox keeps and logs it: its message and SMTP response code, one line, at most
 * 500 characters, with the SMTP password taken out should the server have echoed it.
 */
export function describeMailError(error: unknown, config: Pick<Config, 'SMTP_URL'>): string {
  const base = error instanceof Error ? error.message : String(error);
  const code = (error as { code?: unknown; responseCode?: unknown } | null) ?? {};
  const prefix = [code.code, code.responseCode].filter((part) => part !== undefined).join(' ');
  let text = (prefix ? `${prefix}: ${base}` : base).replace(/\s+/g, ' ').trim();
  if (config.SMTP_URL) {
    const url = new URL(config.SMTP_URL);
    for (const secret of [url.password, decodeURIComponent(url.password)])
      if (secret.length >= 4) text = text.split(secret).join('***');
  }
  return text.length > 500 ? `${text.slice(0, 499)}…` : text;
}
