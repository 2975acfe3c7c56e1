import { algorithmOption } from './algorithm-option.js';
import { bool, type Command, required, str } from './command.js';
import { formatListing } from './output.js';

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
        id_token_signed_response_alg: (result as { id_token_signed_response_alg?: string })
          .id_token_signed_response_alg,
      },
    }),
    usage:
      'idp clients create --name N --site-url URL --redirect-uri URL [--redirect-uri URL …] [--post-logout-redirect-uri URL …]' +
      ' [--wallet] [--official-mobile] [--public] [--require-par] [--require-dpop] [--id-token-alg RS256|ES256|EdDSA]' +
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
      'idp clients update CLIENT_ID [--name N] [--wallet true|false] [--official-mobile true|false] [--disabled true|false]' +
      ' [--add-redirect-uri URL …] [--remove-redirect-uri URL …] [--add-post-logout-redirect-uri URL …] [--remove-post-logout-redirect-uri URL …]' +
      ' [--require-par true|false] [--require-dpop true|false] [--id-token-alg RS256|ES256|EdDSA]' +
      ' [--backchannel-logout-uri URL ("" removes it)] [--logo-uri URL ("" removes it)]',
    summary: 'Change a client; --disabled true stops all of its tokens at once',
    options: {
      name: { type: 'string' },
      wallet: { type: 'string' },
      'official-mobile': { type: 'string' },
      'require-par': { type: 'string' },
      'require-dpop': { type: 'string' },
      disabled: { type: 'string' },
      'add-redirect-uri': { type: 'string', multiple: true },
      'remove-redirect-uri': { type: 'string', multiple: true },
      'id-token-alg': { type: 'string' },
      'add-post-logout-redirect-uri': { type: 'string', multiple: true },
      'remove-post-logout-redirect-uri': { type: 'string', multiple: true },
      'backchannel-logout-uri': { type: 'string' },
      'logo-uri': { type: 'string' },
    },
    check: (args) => void algorithmOption(args, 'id-token-alg'),
    positionals: 1,
    run: async (ctx, args) =>
      (await clients()).updateClient(ctx.db, ctx, args.positionals[0] ?? '', {
        name: str(args, 'name'),
        wallet: bool(args, 'wallet'),
        officialMobile: bool(args, 'official-mobile'),
        requirePar: bool(args, 'require-par'),
        requireDpop: bool(args, 'require-dpop'),
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
    audit: (result) => ({
      action: 'client_secret_rotated',
      subject: `client:${(result as { client_id: string }).client_id}`,
    }),
    usage: 'idp clients rotate-secret CLIENT_ID',
    summary: 'Replace the client_secret; prints the new one this once, the old one stops working at once',
    options: {},
    positionals: 1,
    run: async (ctx, args) => (await clients()).rotateClientSecret(ctx.db, ctx, args.positionals[0] ?? ''),
    text: (result) =>
      `${formatListing(result)}\nThe new client_secret is shown only this once and stored only as a hash; the old one no longer works.`,
  },
];
