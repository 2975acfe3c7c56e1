import { CONSOLE_ROLES, type ConsoleRole, isConsoleRole } from '../modules/operators/roles.js';
import { type Command, type ParsedArgs, required, UsageError } from './command.js';

/** The CLI's own audit actor: whoever runs it has the server's configuration, so it acts as the operator. */
const CLI_ACTOR = 'operator';

function roleOf(args: ParsedArgs): ConsoleRole {
  const role = required(args, 'role');
  if (!isConsoleRole(role))
    throw new UsageError(`--role must be one of ${CONSOLE_ROLES.join(', ')}, got "${role}"`);
  return role;
}

const loadService = () => import('../modules/operators/operators.service.js');

/** `idp admins grant|revoke|list`: who may enter the console (/admin), and with which role. */
export const adminCommands: Command[] = [
  {
    name: 'admins grant',
    usage: `idp admins grant U --role ${CONSOLE_ROLES.join('|')}`,
    summary: 'Give an account a console role (replacing its role); its console sessions end when it changes',
    options: { role: { type: 'string' } },
    positionals: 1,
    check: (args) => void roleOf(args),
    run: async (ctx, args) =>
      (await loadService()).grantRole(ctx.db, ctx, {
        username: args.positionals[0] ?? '',
        role: roleOf(args),
        by: CLI_ACTOR,
      }),
    text: (result) => {
      const { username, role, previous } = result as {
        username: string;
        role: string;
        previous: string | null;
      };
      return previous && previous !== role
        ? `${username} is now ${role} (was ${previous})`
        : `${username} is ${role}`;
    },
  },
  {
    name: 'admins revoke',
    usage: 'idp admins revoke U',
    summary: "Take away an account's console role; its console sessions end at once",
    options: {},
    positionals: 1,
    run: async (ctx, args) =>
      (await loadService()).revokeRole(ctx.db, ctx, { username: args.positionals[0] ?? '', by: CLI_ACTOR }),
    text: (result) => {
      const { username, previous } = result as { username: string; previous: string };
      return `${username} is no longer ${previous}`;
    },
  },
  {
    name: 'admins list',
    usage: 'idp admins list',
    summary: 'The accounts with a console role: username, role, when and by whom it was granted',
    options: {},
    run: async (ctx) => {
      const list = await (await loadService()).operators(ctx.db);
      return {
        admins: list.map((each) => ({
          username: each.username,
          role: each.role,
          granted_at: each.grantedAt.toISOString(),
          granted_by: each.grantedBy,
        })),
      };
    },
    text: (result) => {
      const { admins } = result as { admins: Array<Record<string, string>> };
      if (admins.length === 0) return 'No operators: give one a role with idp admins grant U --role owner';
      return admins
        .map((each) => [each.username, each.role, each.granted_at, each.granted_by].join('  '))
        .join('\n');
    },
  },
];
