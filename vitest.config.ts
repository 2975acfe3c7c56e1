import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    // Each file builds its own database: files run in parallel, tests inside a file in order.
    pool: 'forks',
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // A summary line CI can read, and failures in full.
    reporters: ['default'],
  },
});
