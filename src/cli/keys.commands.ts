import { algorithmOption } from './algorithm-option.js';
import type { Command } from './command.js';

/** Imported when a command runs, not with the command table. */
const keyService = () => import('../modules/oidc/keys.service.js');

/** Signing key commands (`idp keys rotate`, `keys list`, `keys retire`). */
export const keyCommands: Command[] = [
  {
    name: 'keys rotate',
    audit: (result) => ({
      action: 'key_rotated',
      subject: `key:${(result as { kid: string }).kid}`,
      details: { algorithm: (result as { algorithm: string }).algorithm },
    }),
    usage: 'idp keys rotate [--alg RS256|ES256|EdDSA]',
    summary:
      'Add a new id_token signing key of one algorithm (default RS256), which signs with it from then on; its older keys keep verifying until retired',
    options: { alg: { type: 'string' } },
    check: (args) => void algorithmOption(args, 'alg'),
    run: async (ctx, args) => {
      const { listSigningKeys, rotateSigningKey } = await keyService();
      const key = await rotateSigningKey(ctx.db, ctx, algorithmOption(args, 'alg'));
      const keys = await listSigningKeys(ctx.db);
      return {
        kid: key.kid,
        algorithm: key.algorithm,
        created_at: key.createdAt.toISOString(),
        // The keys that verify id_tokens of this algorithm: the new one and those not retired.
        verifying_kids: keys
          .filter((k) => k.retired_at === null && k.algorithm === key.algorithm)
          .map((k) => k.kid),
      };
    },
  },
  {
    name: 'keys list',
    usage: 'idp keys list',
    summary: 'List the signing keys (never their private parts), newest first',
    options: {},
    run: async (ctx) => ({ keys: await (await keyService()).listSigningKeys(ctx.db) }),
  },
  {
    name: 'keys retire',
    audit: (result) => ({ action: 'key_retired', subject: `key:${(result as { kid: string }).kid}` }),
    usage: 'idp keys retire KID',
    summary:
      'Stop publishing a key of any algorithm: id_tokens it signed stop verifying (the key that signs with its algorithm cannot be retired)',
    options: {},
    positionals: 1,
    run: async (ctx, args) => {
      const key = await (await keyService()).retireSigningKey(ctx.db, ctx, args.positionals[0] ?? '');
      return {
        kid: key.kid,
        algorithm: key.algorithm,
        created_at: key.createdAt.toISOString(),
        retired_at: key.retiredAt ? key.retiredAt.toISOString() : null,
      };
    },
  },
];
