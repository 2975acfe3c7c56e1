import { createClient, listClients } from '../modules/clients/clients.service.js';
import { type Command, required } from './command.js';
import { formatListing } from './output.js';

export const clientCommands: Command[] = [
  {
    name: 'clients create',
    usage:
      'idp clients create --name N --site-url URL --redirect-uri URL [--redirect-uri URL …] [--wallet] [--official-mobile]',
    summary: 'Register a client; prints its client_secret this once',
    options: {
      name: { type: 'string' },
      'site-url': { type: 'string' },
      'redirect-uri': { type: 'string', multiple: true },
      wallet: { type: 'boolean' },
      'official-mobile': { type: 'boolean' },
    },
    run: (ctx, args) =>
      createClient(ctx.db, ctx.clock, {
        name: required(args, 'name'),
        siteUrl: required(args, 'site-url'),
        redirectUris: (args.values['redirect-uri'] as string[] | undefined) ?? [],
        wallet: args.values.wallet === true,
        officialMobile: args.values['official-mobile'] === true,
      }),
    text: (result) =>
      `${formatListing(result)}\nThe client_secret is shown only this once and stored only as a hash: keep it safe.`,
  },
  {
    name: 'clients list',
    usage: 'idp clients list',
    summary: 'List registered clients (never their secrets)',
    options: {},
    run: async (ctx) => ({ clients: await listClients(ctx.db) }),
  },
];
