import type { Command } from './command.js';

export const migrateCommands: Command[] = [
  {
    name: 'migrate',
    usage: 'idp migrate',
    summary: 'Apply pending database migrations',
    options: {},
    run: async (ctx) => ({ applied: await (await import('../db/migrate.js')).migrateToLatest(ctx.db) }),
    text: (result) => {
      const { applied } = result as { applied: string[] };
      return applied.length > 0 ? `applied: ${applied.join(', ')}` : 'the database is up to date';
    },
  },
];
