import type { UpstreamKind } from '../db/schema-upstream.js';
import type { ProviderView } from '../modules/upstream/providers.service.js';
import { type Command, type CommandContext, type ParsedArgs, required, str, UsageError } from './command.js';
import { formatListing } from './output.js';

/* `idp providers add|update|remove|list`: the providers people may sign in through ("Continue with …"). */

/** The kinds the service talks to (src/modules/upstream/provider-settings.ts, not imported with the command table). */
const KINDS: readonly UpstreamKind[] = ['oidc', 'github', 'google', 'apple'];

/** Imported when a command runs, not with the command table. */
const providers = () => import('../modules/upstream/providers.service.js');

/** The CLI's audit actor, as for every operator command. */
const CLI_ACTOR = 'operator';

/** The settings `add` and `update` share; `update` takes each optionally. */
const SETTINGS = {
  'display-name': { type: 'string' },
  issuer: { type: 'string' },
  'api-url': { type: 'string' },
  'client-id': { type: 'string' },
  'client-secret': { type: 'string' },
  'client-secret-file': { type: 'string' },
  'apple-team-id': { type: 'string' },
  'apple-key-id': { type: 'string' },
  'apple-private-key-file': { type: 'string' },
  scopes: { type: 'string' },
  disabled: { type: 'boolean' },
  'trust-amr': { type: 'boolean' },
} as const;

const SETTINGS_USAGE =
  ' [--client-secret-file F | --client-secret S] [--apple-team-id T --apple-key-id K --apple-private-key-file F.p8]' +
  ' [--display-name T] [--issuer URL] [--api-url URL] [--scopes "a b"]';

function kindOf(args: ParsedArgs): UpstreamKind {
  const kind = required(args, 'kind');
  if (!(KINDS as readonly string[]).includes(kind))
    throw new UsageError(`--kind must be one of ${KINDS.join(', ')}, got "${kind}"`);
  return kind as UpstreamKind;
}

/** The checks that need no database: options that exclude each other. */
function checkSettings(args: ParsedArgs): void {
  const pairs = [
    ['client-secret', 'client-secret-file'],
    ['enabled', 'disabled'],
    ['trust-amr', 'no-trust-amr'],
  ] as const;
  for (const [one, other] of pairs)
    if (args.values[one] !== undefined && args.values[other] !== undefined)
      throw new UsageError(`give either --${one} or --${other}, not both`);
}

/** A file option's text, as the `idp` process read it where the command was typed. */
function fileText(ctx: CommandContext, args: ParsedArgs, name: string): string | undefined {
  if (str(args, name) === undefined) return undefined;
  const text = ctx.files?.[name];
  if (text === undefined) throw new UsageError(`--${name}: the file was not read`);
  return text;
}

/** A boolean set by `--yes` or `--no` (either absent: unchanged). */
function flag(args: ParsedArgs, yes: string, no: string): boolean | undefined {
  if (args.values[yes] === true) return true;
  if (args.values[no] === true) return false;
  return undefined;
}

/** The settings the options give, as the service names them; what is absent stays undefined. */
function settingsOf(ctx: CommandContext, args: ParsedArgs) {
  return {
    name: args.positionals[0] ?? '',
    displayName: str(args, 'display-name'),
    issuer: str(args, 'issuer'),
    apiUrl: str(args, 'api-url'),
    clientId: str(args, 'client-id'),
    clientSecret: str(args, 'client-secret') ?? fileText(ctx, args, 'client-secret-file'),
    appleTeamId: str(args, 'apple-team-id'),
    appleKeyId: str(args, 'apple-key-id'),
    applePrivateKey: fileText(ctx, args, 'apple-private-key-file'),
    scopes: str(args, 'scopes'),
    enabled: flag(args, 'enabled', 'disabled'),
    trustAmr: flag(args, 'trust-amr', 'no-trust-amr'),
  };
}

const yesNo = (value: boolean) => (value ? 'yes' : 'no');

/** `idp providers list`: one line each under a header, columns padded to their widest value. */
function providerTable(list: readonly ProviderView[]): string {
  if (list.length === 0)
    return 'No providers: add one with idp providers add NAME --kind oidc|github|google|apple …';
  const header = ['NAME', 'KIND', 'DISPLAY NAME', 'ENABLED', 'TRUST AMR', 'LINKED', 'CALLBACK URL'];
  const rows = list.map((each) => [
    each.name,
    each.kind,
    each.display_name,
    yesNo(each.enabled),
    yesNo(each.trust_amr),
    String(each.linked_accounts),
    each.callback_url,
  ]);
  const widths = header.map((title, column) =>
    Math.max(title.length, ...rows.map((row) => (row[column] as string).length)),
  );
  return [header, ...rows]
    .map((row) =>
      row
        .map((cell, column) => (column === row.length - 1 ? cell : cell.padEnd(widths[column] as number)))
        .join('  '),
    )
    .join('\n');
}

export const providerCommands: Command[] = [
  {
    name: 'providers add',
    usage: `idp providers add NAME --kind ${KINDS.join('|')} --client-id ID${SETTINGS_USAGE} [--disabled] [--trust-amr]`,
    summary: 'Add a provider people may sign in through; prints the callback URL to register at it',
    options: { kind: { type: 'string' }, ...SETTINGS },
    positionals: 1,
    check: (args) => {
      checkSettings(args);
      kindOf(args);
    },
    run: async (ctx, args) =>
      (await providers()).addProvider(
        ctx.db,
        ctx,
        { ...settingsOf(ctx, args), kind: kindOf(args) },
        CLI_ACTOR,
      ),
    text: (result) => {
      const view = result as ProviderView;
      return `${formatListing(view)}\nRegister this redirect URI at the provider: ${view.callback_url}${
        view.enabled ? '' : '\nThe provider is disabled: enable it with idp providers update NAME --enabled'
      }`;
    },
  },
  {
    name: 'providers update',
    usage: `idp providers update NAME [--client-id ID]${SETTINGS_USAGE} [--enabled | --disabled] [--trust-amr | --no-trust-amr]`,
    summary: "Change a provider's settings; what is not given stays (--disabled keeps its links)",
    options: { ...SETTINGS, enabled: { type: 'boolean' }, 'no-trust-amr': { type: 'boolean' } },
    positionals: 1,
    check: (args) => {
      checkSettings(args);
      if (Object.keys(args.values).every((name) => name === 'json'))
        throw new UsageError('nothing to change: give at least one setting');
    },
    run: async (ctx, args) =>
      (await providers()).changeProvider(ctx.db, ctx, settingsOf(ctx, args), CLI_ACTOR),
  },
  {
    name: 'providers remove',
    usage: 'idp providers remove NAME',
    summary: "Remove a provider and every account's link to it; prints how many links were removed",
    options: {},
    positionals: 1,
    run: async (ctx, args) =>
      (await providers()).removeProvider(ctx.db, ctx, args.positionals[0] ?? '', CLI_ACTOR),
    text: (result) => {
      const { name, links_removed: links } = result as { name: string; links_removed: number };
      return `Removed provider ${name}; ${links} ${links === 1 ? 'account lost its link' : 'accounts lost their link'} to it.`;
    },
  },
  {
    name: 'providers list',
    usage: 'idp providers list',
    summary: 'List the providers with their callback URLs and linked accounts (never a secret)',
    options: {},
    run: async (ctx) => ({ providers: await (await providers()).listProviderViews(ctx.db, ctx) }),
    text: (result) => providerTable((result as { providers: ProviderView[] }).providers),
  },
];
