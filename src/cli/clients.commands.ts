import { algorithmOption } from './algorithm-option.js';
import { bool, type Command, type ParsedArgs, required, str, UsageError } from './command.js';
import { formatListing } from './output.js';

/** `--overlap SECONDS` of a rotation: a whole number of seconds, 0 to 7 days (checked again by the service). */
function overlapOption(args: ParsedArgs): number {
  const text = str(args, 'overlap');
  if (text === undefined) return 0;
  if (!/^\d{1,7}$/.test(text) || Number(text) > 604_800)
    throw new UsageError('--overlap must be a whole number of seconds from 0 to 604800 (7 days)');
  return Number(text);
}

/** `--device-grant` or `--no-device-grant` of an update (neither: unchanged). */
function deviceGrantOption(args: ParsedArgs): boolean | undefined {
  const allow = args.values['device-grant'] === true;
  const refuse = args.values['no-device-grant'] === true;
  if (allow && refuse) throw new UsageError('give either --device-grant or --no-device-grant, not both');
  return allow ? true : refuse ? false : undefined;
}

/** Imported when a command runs, not with the command table. */
const clients = () => import('../modules/clients/clients.service.js');

export const clientCommands: Command[] = [
  {
    name: 'clients create',
    audit: (result) => ({
      action: 'client_created',
      subject: `client:${(result as { client_id: string }).client_id}`,
      details: {
        wallet: (result as { wallet?: boolean }).wallet,
        official_mobile: (result as { official_mobile?: boolean }).official_mobile,
        require_pushed_authorization_requests: (result as { require_pushed_authorization_requests?: boolean })
          .require_pushed_authorization_requests,
        device_grant: (result as { device_grant?: boolean }).device_grant,
        id_token_signed_response_alg: (result as { id_token_signed_response_alg?: string })
          .id_token_signed_response_alg,
      },
    }),
    usage:
      'idp clients create --name N --site-url URL --redirect-uri URL [--redirect-uri URL …] (optional with --device-grant) [--post-logout-redirect-uri URL …]' +
      ' [--wallet] [--official-mobile] [--public] [--require-par] [--require-dpop] [--device-grant] [--id-token-alg RS256|ES256|EdDSA]' +
      ' [--backchannel-logout-uri URL] [--logo-uri URL]',
    summary: 'Register a client; prints its client_secret this once',
    options: {
      name: { type: 'string' },
      'site-url': { type: 'string' },
      'redirect-uri': { type: 'string', multiple: true },
      'post-logout-redirect-uri': { type: 'string', multiple: true },
      wallet: { type: 'boolean' },
      'official-mobile': { type: 'boolean' },
      'require-par': { type: 'boolean' },
      'device-grant': { type: 'boolean' },
      'id-token-alg': { type: 'string' },
      public: { type: 'boolean' },
      'require-dpop': { type: 'boolean' },
      'backchannel-logout-uri': { type: 'string' },
      'logo-uri': { type: 'string' },
    },
    check: (args) => void algorithmOption(args, 'id-token-alg'),
    run: async (ctx, args) =>
      (await clients()).createClient(ctx.db, ctx, {
        isPublic: args.values.public === true,
        requireDpop: args.values['require-dpop'] === true,
        name: required(args, 'name'),
        siteUrl: required(args, 'site-url'),
        redirectUris: (args.values['redirect-uri'] as string[] | undefined) ?? [],
        postLogoutRedirectUris: (args.values['post-logout-redirect-uri'] as string[] | undefined) ?? [],
        wallet: args.values.wallet === true,
        officialMobile: args.values['official-mobile'] === true,
        requirePar: args.values['require-par'] === true,
        deviceGrant: args.values['device-grant'] === true,
        idTokenAlg: algorithmOption(args, 'id-token-alg'),
        backchannelLogoutUri: str(args, 'backchannel-logout-uri'),
        logoUri: str(args, 'logo-uri'),
      }),
    text: (result) =>
      'client_secret' in result
        ? `${formatListing(result)}\nThe client_secret is shown only this once and stored only as a hash: keep it safe.`
        : `${formatListing(result)}\nA public client has no client_secret: it uses PKCE, and DPoP for refresh tokens.`,
  },
  {
    name: 'clients list',
    usage: 'idp clients list',
    summary: 'List registered clients (never their secrets)',
    options: {},
    run: async (ctx) => ({ clients: await (await clients()).listClients(ctx.db) }),
  },
  {
    name: 'clients update',
    audit: (result, args) => ({
      action: 'client_updated',
      subject: `client:${(result as { client_id: string }).client_id}`,
      details: Object.fromEntries(Object.entries(args.values).filter(([name]) => name !== 'json')),
    }),
    usage:
      'idp clients update CLIENT_ID [--name N] [--site-url URL] [--wallet true|false] [--official-mobile true|false] [--disabled true|false]' +
      ' [--add-redirect-uri URL …] [--remove-redirect-uri URL …] [--add-post-logout-redirect-uri URL …] [--remove-post-logout-redirect-uri URL …]' +
      ' [--require-par true|false] [--require-dpop true|false] [--device-grant | --no-device-grant] [--id-token-alg RS256|ES256|EdDSA]' +
      ' [--backchannel-logout-uri URL ("" removes it)] [--logo-uri URL ("" removes it)]',
    summary: 'Change a client; --disabled true stops all of its tokens at once',
    options: {
      name: { type: 'string' },
      'site-url': { type: 'string' },
      wallet: { type: 'string' },
      'official-mobile': { type: 'string' },
      'require-par': { type: 'string' },
      'require-dpop': { type: 'string' },
      'device-grant': { type: 'boolean' },
      'no-device-grant': { type: 'boolean' },
      disabled: { type: 'string' },
      'add-redirect-uri': { type: 'string', multiple: true },
      'remove-redirect-uri': { type: 'string', multiple: true },
      'id-token-alg': { type: 'string' },
      'add-post-logout-redirect-uri': { type: 'string', multiple: true },
      'remove-post-logout-redirect-uri': { type: 'string', multiple: true },
      'backchannel-logout-uri': { type: 'string' },
      'logo-uri': { type: 'string' },
    },
    check: (args) => {
      algorithmOption(args, 'id-token-alg');
      deviceGrantOption(args);
    },
    positionals: 1,
    run: async (ctx, args) =>
      (await clients()).updateClient(ctx.db, ctx, args.positionals[0] ?? '', {
        name: str(args, 'name'),
        siteUrl: str(args, 'site-url'),
        wallet: bool(args, 'wallet'),
        officialMobile: bool(args, 'official-mobile'),
        requirePar: bool(args, 'require-par'),
        requireDpop: bool(args, 'require-dpop'),
        deviceGrant: deviceGrantOption(args),
        disabled: bool(args, 'disabled'),
        addRedirectUris: (args.values['add-redirect-uri'] as string[] | undefined) ?? [],
        removeRedirectUris: (args.values['remove-redirect-uri'] as string[] | undefined) ?? [],
        idTokenAlg: algorithmOption(args, 'id-token-alg'),
        addPostLogoutRedirectUris:
          (args.values['add-post-logout-redirect-uri'] as string[] | undefined) ?? [],
        removePostLogoutRedirectUris:
          (args.values['remove-post-logout-redirect-uri'] as string[] | undefined) ?? [],
        backchannelLogoutUri: str(args, 'backchannel-logout-uri'),
        logoUri: str(args, 'logo-uri'),
      }),
  },
  {
    name: 'clients rotate-secret',
    audit: (result, args) => ({
      action: 'client_secret_rotated',
      subject: `client:${(result as { client_id: string }).client_id}`,
      details: {
        overlap_seconds: overlapOption(args),
        previous_secret_expires_at:
          (result as { previous_secret_expires_at?: string }).previous_secret_expires_at ?? null,
      },
    }),
    usage: 'idp clients rotate-secret CLIENT_ID [--overlap SECONDS (0 to 604800; default 0)]',
    summary:
      'Replace the client_secret; prints the new one this once, the old one works --overlap seconds more (default: stops at once)',
    options: { overlap: { type: 'string' } },
    check: (args) => void overlapOption(args),
    positionals: 1,
    run: async (ctx, args) =>
      (await clients()).rotateClientSecret(ctx.db, ctx, args.positionals[0] ?? '', {
        overlapSeconds: overlapOption(args),
      }),
    text: (result) => {
      const until = (result as { previous_secret_expires_at?: string }).previous_secret_expires_at;
      return `${formatListing(result)}\nThe new client_secret is shown only this once and stored only as a hash; ${
        until === undefined ? 'the old one no longer works.' : `the old one still works until ${until}.`
      }`;
    },
  },
];
