import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    // Each file builds its own database: files run in parallel, tests inside a file in order.
    pool: 'forks',
    // Many files spend their time waiting on child processes and databases, not on a core: four
    // at once finish the suite in about 4½ minutes on two cores, against about 6 with two.
    maxWorkers: 4,
    // A worker runs its files one after another in one module graph, instead of importing the
    // service (Fastify, Kysely, PGlite, jose…) again for each of ~100 files: that import was most
    // of the suite's CPU. Files stay independent: each builds its own app on its own database, and
    // nothing in src/ keeps state per process that a test reads back (caches are per app or per
    // database handle; the metrics test compares what it adds).
    isolate: false,
    testTimeout: 30_000,
    // A file's set-up makes its database from the migrated template (about 2 s of CPU on PGlite):
    // alone at a load average of 30 on two cores that took 17 s, and with four files at once at a
    // load average of about 20 one such beforeAll went past the 60 s this limit used to be.
    hookTimeout: 120_000,
    // A summary line CI can read, and failures in full.
    reporters: ['default'],
  },
});
