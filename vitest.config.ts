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
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // A summary line CI can read, and failures in full.
    reporters: ['default'],
  },
});
