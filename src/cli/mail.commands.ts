import type { MailMessage } from '../modules/mail/mail.service.js';
import { type Command, type CommandContext, required, str, UsageError } from './command.js';

function testMessage(ctx: CommandContext, to: string): MailMessage {
  const home = `${ctx.config.PUBLIC_URL}/`;
  return {
    kind: 'test',
    to,
    locale: 'en',
    subject: 'Test message',
    text: `This is a test message, sent with "idp mail test" to check the mail settings.\n\n${home}\n`,
    html: `<!doctype html><html lang="en"><body><p>This is a test message, sent with <code>idp mail test</code> to check the mail settings.</p><p><a href="${home}">${home}</a></p></body></html>`,
  };
}

/** `idp mail test`, `idp mail outbox`. */
export const mailCommands: Command[] = [
  {
    name: 'mail test',
    usage: 'idp mail test --to ADDRESS',
    summary:
      'Sends a test message at once through SMTP_URL (or to DATA_DIR/outbox/ without it), not through the outbox; exit 1 with the error',
    options: { to: { type: 'string' } },
    run: async (ctx, args) => {
      const [{ ApiError }, { checkMailMessage }, { createMailTransport, describeMailError, linksIn }] =
        await Promise.all([
          import('../lib/errors.js'),
          import('../modules/mail/mail.service.js'),
          import('../modules/mail/transport.js'),
        ]);
      const message = testMessage(ctx, required(args, 'to'));
      try {
        checkMailMessage({ config: ctx.config, clock: ctx.clock }, message);
      } catch (error) {
        throw new UsageError(`--to must be one address (${(error as Error).message})`);
      }
      // The CLI prints what the fallback would log; a server running it logs nothing more.
      const quiet = { info: () => undefined, warn: () => undefined };
      const transport = createMailTransport(ctx.config, quiet);
      try {
        const sent = await transport.send(message);
        return {
          sent: true,
          transport: transport.kind,
          message_id: sent.messageId,
          ...(sent.file ? { file: sent.file, links: linksIn(message.text) } : {}),
        };
      } catch (error) {
        throw new ApiError(502, 'mail_failed', `sending failed: ${describeMailError(error, ctx.config)}`);
      } finally {
        transport.close();
      }
    },
  },
  {
    name: 'mail outbox',
    usage: 'idp mail outbox [--failed] [--limit N] (N from 1 to 1000, default 20)',
    summary:
      'How many messages wait, were sent and were given up on, and the latest ones (never their bodies); --failed: only those given up on',
    options: { failed: { type: 'boolean' }, limit: { type: 'string' } },
    run: async (ctx, args) => {
      const text = str(args, 'limit') ?? '20';
      const limit = /^\d{1,4}$/.test(text) ? Number(text) : Number.NaN;
      if (!(limit >= 1 && limit <= 1000))
        throw new UsageError(`--limit must be a whole number from 1 to 1000, got "${text}"`);
      const { countMail, latestMail } = await import('../modules/mail/outbox.repository.js');
      const counts = await countMail(ctx.db);
      const messages = await latestMail(ctx.db, { limit, failedOnly: args.values.failed === true });
      return {
        ...counts,
        messages: messages.map((mail) => ({
          id: mail.id,
          kind: mail.kind,
          recipient: mail.recipient,
          created_at: mail.createdAt.toISOString(),
          attempts: mail.attempts,
          status: mail.sentAt ? 'sent' : mail.failedAt ? 'failed' : 'waiting',
          next_attempt_at: mail.sentAt || mail.failedAt ? null : mail.nextAttemptAt.toISOString(),
          sent_at: mail.sentAt?.toISOString() ?? null,
          failed_at: mail.failedAt?.toISOString() ?? null,
          last_error: mail.lastError,
        })),
      };
    },
  },
];
