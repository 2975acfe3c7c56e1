import { z } from 'zod';

/** The e-mail settings (docs/operating.md "E-mail"), part of src/config.ts's `settings`, in this order. */
export const mailSettings = {
  SMTP_URL: z
    .string()
    .trim()
    .refine((value) => {
      try {
        const url = new URL(value);
        return (url.protocol === 'smtp:' || url.protocol === 'smtps:') && url.hostname !== '';
      } catch {
        return false;
      }
    }, 'must be an smtp:// or smtps:// URL')
    .optional()
    .describe(
      'Where e-mail is sent: `smtp://user:pass@host:587` (STARTTLS when the server offers it) or `smtps://…:465` (TLS from the start). Unset: each message is written to `DATA_DIR/outbox/` as an `.eml` file and its links are logged (development only: with `NODE_ENV=production` the server refuses to start without it, unless `MAIL_DISABLED=1`).',
    ),
  MAIL_DISABLED: z
    .enum(['0', '1', 'false', 'true'], { message: 'must be 1 (or true) to turn e-mail off, or 0 (false)' })
    .transform((value) => value === '1' || value === 'true')
    .default(false)
    .describe(
      '`1`: send no e-mail at all. Each message (verification, password reset…) is recorded in the outbox as given up at once, not sent (`idp mail outbox --failed` lists them), and logged with its id and kind only. For a deployment without e-mail: users then cannot verify an address or reset a password themselves. Cannot be combined with `SMTP_URL`.',
    ),
  MAIL_FROM: z
    .string()
    .trim()
    .max(320)
    .regex(
      /^(?:[^<>\r\n]*<[^<>\s@]+@[^<>\s@]+>|[^<>\s@]+@[^<>\s@]+)$/,
      'must be an address, or a name followed by <address>',
    )
    .optional()
    .describe('The sender of every message. Default `<BRAND_NAME> <no-reply@host of PUBLIC_URL>`.'),
} as const;

/**
 * Why a server must not start with these mail settings, or null. In production, mail without
 * SMTP_URL would be written to files nobody reads, and users told "we sent you a link" would wait
 * for nothing: the operator either gives an SMTP server or says, with MAIL_DISABLED=1, that there is
 * no mail.
 */
export function mailSettingsProblem(config: {
  NODE_ENV: string;
  SMTP_URL?: string | undefined;
  MAIL_DISABLED: boolean;
}): string | null {
  if (config.NODE_ENV !== 'production' || config.SMTP_URL || config.MAIL_DISABLED) return null;
  return 'refusing to start with NODE_ENV=production: SMTP_URL must be set (smtp://user:password@host:587), or MAIL_DISABLED=1 to send no e-mail at all (docs/operating.md "E-mail")';
}
