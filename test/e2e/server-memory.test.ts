import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// @ts-expect-error bin/ is plain JavaScript without declarations
import { SERVER_NODE_FLAGS } from '../../bin/launch.js';
import { cliDatabase, projectRoot } from '../helpers/cli.js';
import { freePort } from '../helpers/tcp-proxy.js';

/*
 * The server started as `npm start` and the image start it (bin/launch.js's flags) makes one full
 * collection once it has started, so that the start-up's garbage is not kept resident while it
 * waits for load. V8's GC trace names a collection asked for by `gc()` "testing".
 */
let env: Record<string, string>;
let drop: () => Promise<void>;

beforeAll(async () => {
  const database = await cliDatabase('idp-memory-', { HOST: '127.0.0.1', LOG_LEVEL: 'info' });
  env = database.env;
  drop = database.drop;
});

afterAll(async () => {
  await drop();
});

describe('the server after start-up', () => {
  it('runs one full collection after it listens', async () => {
    const port = await freePort();
    const child = spawn(process.execPath, [...SERVER_NODE_FLAGS, '--trace-gc', 'bin/server.js'], {
      cwd: projectRoot,
      env: { ...env, PORT: String(port), PUBLIC_URL: `http://127.0.0.1:${port}` },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      output += chunk;
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      output += chunk;
    });
    try {
      // A start on an embedded database takes seconds on an idle machine, and several times that on
      // a loaded one (the whole suite running beside it): the limit is the loaded machine's.
      const deadline = Date.now() + 90_000;
      const collected = () =>
        /Mark-Compact[^\n]*testing/.exec(output.slice(output.indexOf('Server listening')));
      while (!(output.includes('Server listening') && collected())) {
        if (Date.now() > deadline || child.exitCode !== null) break;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect(output).toContain('Server listening');
      expect(collected(), output.slice(-2000)).not.toBeNull();
      // Once, not a timer: no further one within a second. One gc() can print two lines (when V8's
      // incremental marking was already under way, it finishes that cycle and then runs its own),
      // which a loaded machine's pipe may deliver apart: the second has half a second to arrive.
      const count = () => output.match(/Mark-Compact[^\n]*testing/g)?.length ?? 0;
      await new Promise((resolve) => setTimeout(resolve, 500));
      const settled = count();
      expect(settled).toBeLessThanOrEqual(2);
      await new Promise((resolve) => setTimeout(resolve, 1000));
      expect(count()).toBe(settled);
    } finally {
      child.kill('SIGKILL');
    }
  }, 120_000);
});
