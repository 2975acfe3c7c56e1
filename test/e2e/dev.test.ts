import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { childEnv, projectRoot } from '../helpers/cli.js';
import { usingPostgres } from '../helpers/database.js';
import { freePort } from '../helpers/tcp-proxy.js';

/**
 * `npm run dev` as a developer starts it: the provider, the demo data and the example site in one
 * command, with the URLs to open and the provider's readable log lines. On the embedded database
 * only (it is what a development machine runs without configuration).
 */
let dataDir: string;
let dev: ChildProcess;
let output = '';
let providerPort: number;
let examplePort: number;

describe.skipIf(usingPostgres)('npm run dev', () => {
  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'idp-dev-'));
    providerPort = await freePort();
    examplePort = await freePort();
    dev = spawn(process.execPath, ['--import', 'tsx', 'scripts/dev.ts'], {
      cwd: projectRoot,
      env: childEnv({
        DATA_DIR: dataDir,
        PORT: String(providerPort),
        EXAMPLE_PORT: String(examplePort),
        LOG_LEVEL: 'info',
      }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`npm run dev did not get ready:\n${output}`)), 90_000);
      const collect = (chunk: Buffer) => {
        output += chunk.toString('utf8');
        if (output.includes('Ctrl-C stops both.')) {
          clearTimeout(timer);
          resolve();
        }
      };
      dev.stdout?.on('data', collect);
      dev.stderr?.on('data', collect);
      dev.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`npm run dev exited with ${code}:\n${output}`));
      });
    });
  }, 120_000);

  afterAll(async () => {
    if (dev.exitCode === null && dev.signalCode === null) {
      dev.kill('SIGKILL');
    }
    await rm(dataDir, { recursive: true, force: true });
  });

  it('prints the URLs to open and the demo user to sign in as', () => {
    expect(output).toContain(
      `http://localhost:${examplePort}    the example site: "Sign in" as demo / demo-password`,
    );
    expect(output).toContain(`http://localhost:${providerPort}/api/v1/docs`);
    expect(output).toContain(`http://localhost:${providerPort}/account`);
    expect(output).not.toMatch(/sk_[A-Za-z0-9]/); // never the client secret
  });

  it('serves the provider and the example site, which signs in with the demo client', async () => {
    const status = await fetch(`http://localhost:${providerPort}/api/v1/platform/status`);
    expect(status.status).toBe(200);
    const site = await fetch(`http://localhost:${examplePort}/`);
    expect(site.status).toBe(200);
    expect(await site.text()).toContain('id="sign-in"');
    // The site's "Sign in" goes to the provider's authorize endpoint with the demo client.
    const login = await fetch(`http://localhost:${examplePort}/login`, { redirect: 'manual' });
    expect(login.status).toBe(302);
    const location = new URL(login.headers.get('location') ?? '');
    expect(location.origin).toBe(`http://localhost:${providerPort}`);
    expect(location.searchParams.get('client_id')).toMatch(/^pk_/);
  });

  it("prefixes each process's lines, the provider's in the readable format", async () => {
    // The request line of the previous test's status request arrives through a pipe.
    for (let waited = 0; !output.includes('/api/v1/platform/status') && waited < 5000; waited += 100) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const providerLines = output.split('\n').filter((line) => line.startsWith('idp  │ '));
    expect(providerLines.length).toBeGreaterThan(0);
    for (const line of providerLines) expect(line.slice('idp  │ '.length).trimStart()).not.toMatch(/^\{/);
    expect(providerLines.some((line) => line.includes('/api/v1/platform/status'))).toBe(true);
  });

  it('stops both processes on Ctrl-C', async () => {
    const exited = new Promise<number | null>((resolve) => dev.once('exit', (code) => resolve(code)));
    dev.kill('SIGINT');
    expect(await exited).toBe(0);
    const refused = (url: string) =>
      fetch(url).then(
        () => false,
        () => true,
      );
    expect(await refused(`http://localhost:${providerPort}/health/ready`)).toBe(true);
    expect(await refused(`http://localhost:${examplePort}/`)).toBe(true);
  }, 30_000);
});
