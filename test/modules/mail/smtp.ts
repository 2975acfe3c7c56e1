import { type ParsedMail, simpleParser } from 'mailparser';
import { SMTPServer, type SMTPServerOptions } from 'smtp-server';
import type { Enqueued } from '../../../src/modules/mail/mail.service.js';

/** A message as the test SMTP server received it: the envelope, and the parsed message. */
export interface Received {
  mailFrom: string;
  rcptTo: string[];
  raw: string;
  parsed: ParsedMail;
}

/**
 * A real SMTP server in the test process, on 127.0.0.1 (the `smtp-server` package): what the
 * service sends arrives here over a socket. No STARTTLS (its certificate would be self-signed);
 * AUTH is accepted on the plain connection and checked against `user`/`pass` when given.
 */
export class TestSmtpServer {
  readonly received: Received[] = [];
  port = 0;
  private server: SMTPServer | undefined;
  /** When set, every DATA is refused with this reply (a server that takes no mail). */
  refuse: string | undefined;

  constructor(private readonly auth?: { user: string; pass: string }) {}

  url(credentials = this.auth): string {
    const user = credentials
      ? `${encodeURIComponent(credentials.user)}:${encodeURIComponent(credentials.pass)}@`
      : '';
    return `smtp://${user}127.0.0.1:${this.port}`;
  }

  /** Listens (when not already): on a free port the first time, on the same one after a `stop`. */
  async start(): Promise<void> {
    if (this.server) return;
    const options: SMTPServerOptions = {
      disabledCommands: this.auth ? ['STARTTLS'] : ['STARTTLS', 'AUTH'],
      authOptional: !this.auth,
      allowInsecureAuth: true,
      logger: false,
      onAuth: (auth, _session, callback) => {
        if (auth.username === this.auth?.user && auth.password === this.auth?.pass)
          return callback(null, { user: auth.username });
        return callback(new Error('Invalid username or password'));
      },
      onData: (stream, session, callback) => {
        const chunks: Buffer[] = [];
        stream.on('data', (chunk: Buffer) => chunks.push(chunk));
        stream.on('end', () => {
          if (this.refuse) {
            const error = new Error(this.refuse) as Error & { responseCode: number };
            error.responseCode = 451;
            return callback(error);
          }
          const raw = Buffer.concat(chunks).toString('utf8');
          simpleParser(raw)
            .then((parsed) => {
              this.received.push({
                mailFrom: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
                rcptTo: session.envelope.rcptTo.map((rcpt) => rcpt.address),
                raw,
                parsed,
              });
              callback();
            })
            .catch(callback);
        });
      },
    };
    const server = new SMTPServer(options);
    await new Promise<void>((resolve, reject) => {
      server.server.once('error', reject);
      server.listen(this.port, '127.0.0.1', () => resolve());
    });
    this.port = (server.server.address() as { port: number }).port;
    this.server = server;
  }

  /** Stops listening: connections are refused until `start` again. */
  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** Resolves once `count` messages have arrived, or rejects after `timeoutMs`. */
  async waitFor(count: number, timeoutMs = 10_000): Promise<Received[]> {
    const deadline = Date.now() + timeoutMs;
    while (this.received.length < count) {
      if (Date.now() > deadline)
        throw new Error(`expected ${count} messages, the SMTP server received ${this.received.length}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    return this.received;
  }
}

/** The id of a message enqueueMail queued; fails the test when it was not queued. */
export function queuedId(result: Enqueued): number {
  if (!result.queued) throw new Error(`the message was not queued: ${result.reason}`);
  return result.id;
}
