import type { Config } from '../config.js';
import { type Command, type ParsedArgs, str, UsageError } from './command.js';
import { DEMO, type DemoResult, demoSite } from './demo-account.js';

export type { DemoResult } from './demo-account.js';

function demoText(result: object): string {
  const { issuer, discovery_url, client, user } = result as DemoResult;
  return [
    `Demo site and user ready (${client.created ? 'created' : 'found'}; development only).`,
    '',
    `  issuer         ${issuer}`,
    `  discovery      ${discovery_url}`,
    `  client_id      ${client.client_id}`,
    `  client_secret  ${client.client_secret}`,
    `  redirect URIs  ${client.redirect_uris.join(', ')}`,
    `  wallet right   ${client.wallet ? 'yes' : 'no'}`,
    `  user           ${user.username} / ${user.password}${user.email ? ` (${user.email})` : ''}`,
    '',
    'The client_secret is new on every run; the previous one no longer works.',
    `Try it: \`npm run example\`, then open ${client.site_url} and sign in as the demo user.`,
  ].join('\n');
}

/** --site-port: the example site's port on this machine (`npm run dev` passes its EXAMPLE_PORT). */
function sitePort(args: ParsedArgs): number {
  const text = str(args, 'site-port');
  if (text === undefined) return DEMO.sitePort;
  const port = /^\d{1,5}$/.test(text) ? Number(text) : Number.NaN;
  if (!(port >= 1 && port <= 65535))
    throw new UsageError(`--site-port must be a port from 1 to 65535, got "${text}"`);
  return port;
}

const { siteUrl, redirectUris } = demoSite(DEMO.sitePort);

export const demoCommands: Command[] = [
  {
    name: 'demo',
    usage: 'idp demo [--site-port N] [--json]',
    summary:
      `Create (or find again) a demo client "${DEMO.clientName}" for the example site at ${siteUrl} ` +
      `(another port with --site-port) with the wallet right and redirect URIs ` +
      `${redirectUris.join(' and ')}, and a demo user ${DEMO.username} / ${DEMO.password} ` +
      `(${DEMO.email}, verified; ${DEMO.coins} coins when created). Each run prints a new client_secret ` +
      '(the previous one stops working) and resets the password. Refused when NODE_ENV=production',
    options: { 'site-port': { type: 'string' } },
    check: (args) => void sitePort(args),
    refuse: (config: Config) =>
      config.NODE_ENV === 'production'
        ? 'demo is refused when NODE_ENV=production: it creates a user whose password is published (use "idp users create" and "idp clients create")'
        : undefined,
    run: async (ctx, args) => (await import('./demo-setup.js')).runDemo(ctx, sitePort(args)),
    text: demoText,
  },
];
