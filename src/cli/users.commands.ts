import type { Context } from '../context.js';
import { MAIL_LOCALES, type MailLocale } from '../modules/mail/mail-locales.js';
import {
  bool,
  type Command,
  type CommandContext,
  type ParsedArgs,
  required,
  str,
  UsageError,
} from './command.js';
import { formatListing } from './output.js';

// The services are imported when a command runs, not with the command table: `idp --help` and
// every other command load none of them.
const accounts = () => import('../modules/accounts/accounts.service.js');

/** The services' context: the command's, without its database handle. */
const contextOf = (ctx: CommandContext): Context => ({ config: ctx.config, clock: ctx.clock });

/** `--lang` of `users send-reset`: the language of the message (English unless given). */
function langOf(args: ParsedArgs): MailLocale {
  const lang = str(args, 'lang') ?? 'en';
  if (!(MAIL_LOCALES as readonly string[]).includes(lang))
    throw new UsageError(`--lang must be one of ${MAIL_LOCALES.join(', ')}, got "${lang}"`);
  return lang as MailLocale;
}

/** Flags that cannot be combined: a `--no-x` flag and any flag that sets x. */
function refuseConflicts(args: ParsedArgs, clear: string, setters: readonly string[]): void {
  const given = setters.filter((name) => str(args, name) !== undefined);
  if (args.values[clear] === true && given.length > 0) {
    throw new UsageError(`--${clear} cannot be combined with ${given.map((name) => `--${name}`).join(', ')}`);
  }
}

/** `--limit` of `users list`: 1 to 1000, 50 unless given. */
function limitOf(args: ParsedArgs): number {
  const text = str(args, 'limit') ?? '50';
  const limit = /^\d{1,4}$/.test(text) ? Number(text) : Number.NaN;
  if (!(limit >= 1 && limit <= 1000))
    throw new UsageError(`--limit must be a whole number from 1 to 1000, got "${text}"`);
  return limit;
}

/** The one field `users find` looks up: exactly one of --username, --email and --id. */
function findBy(args: ParsedArgs): { username: string } | { email: string } | { id: number } {
  const given = ['username', 'email', 'id'].filter((name) => str(args, name) !== undefined);
  if (given.length !== 1) throw new UsageError('give exactly one of --username, --email and --id');
  const username = str(args, 'username');
  if (username !== undefined) return { username };
  const email = str(args, 'email');
  if (email !== undefined) return { email };
  const text = str(args, 'id') ?? '';
  if (!/^\d{1,15}$/.test(text) || Number(text) < 1)
    throw new UsageError(`--id must be a user id (digits), got "${text}"`);
  return { id: Number(text) };
}

/** One account a line: id, username, status, address (verified or not), display name, created. */
function accountLines(result: object): string {
  const { users } = result as { users: Array<Record<string, string | number | boolean | null>> };
  if (users.length === 0) return '(no user)';
  return users
    .map((user) =>
      [
        user.id,
        user.username,
        user.status,
        user.email === null ? '-' : `${user.email}${user.email_verified ? ' (verified)' : ' (unverified)'}`,
        user.display_name === null ? '-' : JSON.stringify(user.display_name),
        user.created_at,
      ].join('  '),
    )
    .join('\n');
}

const userAdmin = () => import('../modules/user-admin/user-search.service.js');

export const userCommands: Command[] = [
  {
    name: 'users list',
    usage: 'idp users list [--search TEXT] [--limit N] (N from 1 to 1000, default 50)',
    summary:
      "Accounts, newest first, or those matching --search as the console's search ranks them (id, then prefixes, then substrings)",
    options: { search: { type: 'string' }, limit: { type: 'string' } },
    check: (args) => void limitOf(args),
    run: async (ctx, args) => {
      const { listUsers, presentAccount } = await userAdmin();
      const rows = await listUsers(ctx.db, { search: str(args, 'search'), limit: limitOf(args) });
      return { users: rows.map(presentAccount) };
    },
    text: accountLines,
  },
  {
    name: 'users find',
    usage: 'idp users find (--username U | --email E | --id N)',
    summary:
      'The accounts with exactly this username (any case), e-mail address (any case; several may share one) or id, whatever their state',
    options: { username: { type: 'string' }, email: { type: 'string' }, id: { type: 'string' } },
    check: (args) => void findBy(args),
    run: async (ctx, args) => {
      const { findUsersExactly, presentAccount } = await userAdmin();
      return { users: (await findUsersExactly(ctx.db, findBy(args))).map(presentAccount) };
    },
    text: accountLines,
  },
  {
    name: 'users create',
    usage:
      'idp users create --username U (--password P | --password-stdin) [--email E] [--email-verified] [--display-name D] [--verification-level 0|1|2]',
    summary: 'Create a user account',
    options: {
      username: { type: 'string' },
      password: { type: 'string' },
      'password-stdin': { type: 'boolean' },
      email: { type: 'string' },
      'email-verified': { type: 'boolean' },
      'display-name': { type: 'string' },
      'verification-level': { type: 'string' },
    },
    run: async (ctx, args) => {
      const fromStdin = args.values['password-stdin'] === true;
      if (fromStdin && str(args, 'password') !== undefined) {
        throw new UsageError('give either --password or --password-stdin, not both');
      }
      // One trailing newline is the terminal's, not the password's.
      const password = fromStdin ? (ctx.stdin ?? '').replace(/\r?\n$/, '') : required(args, 'password');
      if (args.values['email-verified'] === true && str(args, 'email') === undefined) {
        throw new UsageError('--email-verified needs --email');
      }
      return (await accounts()).createUser(ctx.db, contextOf(ctx), {
        username: required(args, 'username'),
        password,
        email: str(args, 'email'),
        emailVerified: args.values['email-verified'] === true,
        displayName: str(args, 'display-name'),
        verificationLevel: str(args, 'verification-level') ?? 0,
      });
    },
  },
  {
    name: 'users update',
    usage:
      'idp users update U [--display-name D] [--avatar-url URL] [--verification-level 0|1|2] [--email E] [--email-verified true|false] [--game-name G --game-url URL | --no-game] [--tag-label L --tag-kind K --tag-slug S | --no-tag]',
    summary: "Change a user's profile; prints it as /me shows it with every scope",
    options: {
      'display-name': { type: 'string' },
      'avatar-url': { type: 'string' },
      'verification-level': { type: 'string' },
      email: { type: 'string' },
      'email-verified': { type: 'string' },
      'game-name': { type: 'string' },
      'game-url': { type: 'string' },
      'no-game': { type: 'boolean' },
      'tag-label': { type: 'string' },
      'tag-kind': { type: 'string' },
      'tag-slug': { type: 'string' },
      'no-tag': { type: 'boolean' },
    },
    positionals: 1,
    run: async (ctx, args) => {
      refuseConflicts(args, 'no-game', ['game-name', 'game-url']);
      refuseConflicts(args, 'no-tag', ['tag-label', 'tag-kind', 'tag-slug']);
      const [{ updateUserProfile }, { ALL_SCOPES }, { presentMe, presentUserinfo }] = await Promise.all([
        accounts(),
        import('../modules/oauth/scopes.js'),
        import('../modules/profiles/profile.presenter.js'),
      ]);
      const user = await updateUserProfile(ctx.db, contextOf(ctx), {
        username: args.positionals[0] ?? '',
        displayName: str(args, 'display-name'),
        avatarUrl: str(args, 'avatar-url'),
        verificationLevel: str(args, 'verification-level'),
        email: str(args, 'email'),
        emailVerified: bool(args, 'email-verified'),
        gameName: str(args, 'game-name'),
        gameUrl: str(args, 'game-url'),
        clearGame: args.values['no-game'] === true,
        tagLabel: str(args, 'tag-label'),
        tagKind: str(args, 'tag-kind'),
        tagSlug: str(args, 'tag-slug'),
        clearTag: args.values['no-tag'] === true,
      });
      return presentMe(presentUserinfo(user, ALL_SCOPES, ctx.config.PUBLIC_URL));
    },
    // The payload once: the JSON repeats it at the top level and under `user` (the /me shape).
    text: (result) => formatListing((result as { user: unknown }).user),
  },
  {
    name: 'users disable',
    usage: 'idp users disable U',
    summary: 'Disable an account: no sign-in, out of search, every token and session ends at once',
    options: {},
    positionals: 1,
    run: async (ctx, args) =>
      (await accounts()).disableUser(ctx.db, contextOf(ctx), { username: args.positionals[0] ?? '' }),
  },
  {
    name: 'users enable',
    usage: 'idp users enable U',
    summary: 'Enable a disabled account again',
    options: {},
    positionals: 1,
    run: async (ctx, args) =>
      (await accounts()).enableUser(ctx.db, contextOf(ctx), { username: args.positionals[0] ?? '' }),
  },
  {
    name: 'users send-reset',
    usage: 'idp users send-reset U [--lang en|ru]',
    summary:
      "Queues a password reset link to the user's e-mail address (30 minutes, single use); never prints the link",
    options: { lang: { type: 'string' } },
    positionals: 1,
    check: (args) => void langOf(args),
    run: async (ctx, args) =>
      (await import('../modules/accounts/password-reset.service.js')).sendPasswordResetByOperator(
        ctx.db,
        contextOf(ctx),
        {
          username: args.positionals[0] ?? '',
          locale: langOf(args),
        },
      ),
  },
  {
    name: 'users mfa-reset',
    usage: 'idp users mfa-reset U',
    summary:
      "Removes the account's second factors (TOTP, recovery codes and passkeys), for a user who lost them; audited",
    options: {},
    positionals: 1,
    run: async (ctx, args) =>
      (await import('../modules/mfa/second-factor.service.js')).resetSecondFactors(ctx.db, contextOf(ctx), {
        username: args.positionals[0] ?? '',
        actor: 'operator',
      }),
  },
  {
    name: 'users unlock',
    usage: 'idp users unlock U',
    summary:
      "Ends the account's sign-in lockouts: the counts of failed passwords and codes, and the run of wrong second-step codes; audited",
    options: {},
    positionals: 1,
    run: async (ctx, args) =>
      (await import('../modules/mfa/second-factor-lockout.js')).unlockSignIn(ctx.db, contextOf(ctx), {
        username: args.positionals[0] ?? '',
        actor: 'operator',
      }),
  },
];
