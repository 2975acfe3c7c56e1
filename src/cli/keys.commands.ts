import { listSigningKeys, retireSigningKey, rotateSigningKey } from '../modules/oidc/keys.service.js';
import type { Command } from './command.js';

/** Signing key commands (`idp keys rotate`, `keys list`, `keys retire`). */
export const keyCommands: Command[] = [
  {
    name: 'keys rotate',
    audit: (result) => ({ action: 'key_rotated', subject: `key:${(result as { kid: string }).kid}` }),
    usage: 'idp keys rotate',
    summary:
      'Add a new id_token signing key, which signs from then on; older keys keep verifying until retired',
    options: {},
    run: async (ctx) => {
      const key = await rotateSigningKey(ctx.db, ctx);
      const keys = await listSigningKeys(ctx.db);
      return {
        kid: key.kid,
        algorithm: key.algorithm,
        created_at: key.createdAt.toISOString(),
        verifying_kids: keys.filter((k) => k.retired_at === null).map((k) => k.kid),
      };
    },
  },
  {
    name: 'keys list',
    usage: 'idp keys list',
    summary: 'List the signing keys (never their private parts), newest first',
    options: {},
    run: async (ctx) => ({ keys: await listSigningKeys(ctx.db) }),
  },
  {
    name: 'keys retire',
    audit: (result) => ({ action: 'key_retired', subject: `key:${(result as { kid: string }).kid}` }),
    usage: 'idp keys retire KID',
    summary: 'Stop publishing a key: id_tokens it signed stop verifying (the signing key cannot be retired)',
    options: {},
    positionals: 1,
    run: async (ctx, args) => {
      const key = await retireSigningKey(ctx.db, ctx, args.positionals[0] ?? '');
      return {
        kid: key.kid,
        algorithm: key.algorithm,
        created_at: key.createdAt.toISOString(),
        retired_at: key.retiredAt ? key.retiredAt.toISOString() : null,
      };
    },
  },
];
