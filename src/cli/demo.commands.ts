import type { Config } from '../config.js';
import type { Command } from './command.js';
import { DEMO, type DemoResult } from './demo-account.js';

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
    'Try it: `npm run example`, then open http://localhost:4000 and sign in as the demo user.',
  ].join('\n');
}

export const demoCommands: Command[] = [
  {
    name: 'demo',
    usage: 'idp demo [--json]',
    summary:
      `Create (or find again) a demo client "${DEMO.clientName}" with the wallet right and redirect URIs ` +
      `${DEMO.redirectUris.join(' and ')}, and a demo user ${DEMO.username} / ${DEMO.password} ` +
      `(${DEMO.email}, verified; ${DEMO.coins} coins when created). Each run prints a new client_secret ` +
      '(the previous one stops working) and resets the password. Refused when NODE_ENV=production',
    options: {},
    refuse: (config: Config) =>
      config.NODE_ENV === 'production'
        ? 'demo is refused when NODE_ENV=production: it creates a user whose password is published (use "idp users create" and "idp clients create")'
        : undefined,
    run: async (ctx) => (await import('./demo-setup.js')).runDemo(ctx),
    text: demoText,
  },
];
