import { type Command, type ParsedArgs, str, UsageError } from './command.js';
import { formatListing } from './output.js';

/** A whole-number option from `min` to `max`, or undefined when absent (the service checks it again). */
function wholeNumber(args: ParsedArgs, name: string, min: number, max: number): number | undefined {
  const text = str(args, name);
  if (text === undefined) return undefined;
  if (!/^\d{1,9}$/.test(text) || Number(text) < min || Number(text) > max)
    throw new UsageError(`--${name} must be a whole number from ${min} to ${max}`);
  return Number(text);
}

/** Imported when a command runs, not with the command table. */
const tokens = () => import('../modules/developer-apps/registration-tokens.service.js');
const accounts = () => import('../modules/accounts/accounts.repository.js');

export const registrationTokenCommands: Command[] = [
  {
    name: 'registration-tokens create',
    usage: 'idp registration-tokens create [--uses N] [--expires-in SECONDS] [--owner USERNAME]',
    summary: 'Make an RFC 7591 initial access token; prints it this once',
    options: {
      uses: { type: 'string' },
      'expires-in': { type: 'string' },
      owner: { type: 'string' },
    },
    check: (args) => {
      wholeNumber(args, 'uses', 1, 1000);
      wholeNumber(args, 'expires-in', 60, 7_776_000);
    },
    run: async (ctx, args) => {
      const username = str(args, 'owner');
      let ownerUserId: number | null = null;
      if (username !== undefined) {
        const owner = await (await accounts()).findUserByUsername(ctx.db, username);
        if (!owner || owner.disabledAt !== null)
          throw new UsageError(`--owner: no account is named ${username}`);
        ownerUserId = owner.id;
      }
      const uses = wholeNumber(args, 'uses', 1, 1000);
      const expiresInSeconds = wholeNumber(args, 'expires-in', 60, 7_776_000);
      const created = await (await tokens()).createRegistrationToken(ctx.db, ctx, {
        ownerUserId,
        createdBy: 'cli',
        ...(uses === undefined ? {} : { uses }),
        ...(expiresInSeconds === undefined ? {} : { expiresInSeconds }),
      });
      return { ...created, owner: username ?? null };
    },
    audit: (result) => {
      const created = result as { id: number; uses: number; expires_at: string; owner: string | null };
      return {
        action: 'registration_token_created',
        subject: `registration_token:${created.id}`,
        details: { uses: created.uses, expires_at: created.expires_at, owner: created.owner },
      };
    },
    text: (result) =>
      `${formatListing(result)}\nThe token is shown only this once and stored only as a hash: send it as "Authorization: Bearer <token>" to POST /api/v1/oauth/register.`,
  },
];
