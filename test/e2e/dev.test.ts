import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { childEnv, parseJsonOutput, projectRoot, runIdp } from '../helpers/cli.js';
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

  it("registers the demo client at the example site's port (EXAMPLE_PORT), not the default 4000", async () => {
    const login = await fetch(`http://localhost:${examplePort}/login`, { redirect: 'manual' });
    const location = new URL(login.headers.get('location') ?? '');
    expect(location.searchParams.get('redirect_uri')).toBe(`http://localhost:${examplePort}/callback`);
    // The running server answers the CLI for its DATA_DIR.
    const listed = parseJsonOutput(
      await runIdp(['clients', 'list', '--json'], {
        env: childEnv({ DATA_DIR: dataDir, LOG_LEVEL: 'warn' }),
      }),
    ) as { clients: Array<{ name: string; site_url: string; redirect_uris: string[] }> };
    expect(listed.clients.filter((listedClient) => listedClient.name === 'Demo site')).toEqual([
      expect.objectContaining({
        site_url: `http://localhost:${examplePort}`,
        redirect_uris: [
          `http://localhost:${examplePort}/callback`,
          `http://127.0.0.1:${examplePort}/callback`,
        ],
      }),
    ]);
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

/** `npm run dev` run to its end: its exit code and everything it printed. */
function runDev(
  env: Record<string, string>,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/dev.ts'], {
    cwd: projectRoot,
    env: childEnv(env),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    stdout += chunk.toString('utf8');
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString('utf8');
  });
  const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
  return new Promise((resolve) =>
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    }),
  );
}

describe.skipIf(usingPostgres)('npm run dev on a busy port', () => {
  /** Another program on a port: a web server that answers every request 200, as a dev server does. */
  let other: http.Server;
  let busyPort: number;
  const neverCreated = path.join(os.tmpdir(), `idp-dev-busy-${process.pid}`);

  beforeAll(async () => {
    other = http.createServer((_request, response) => response.end('another app'));
    await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
    busyPort = (other.address() as AddressInfo).port;
  });

  afterAll(async () => {
    await new Promise((resolve) => other.close(resolve));
    await rm(neverCreated, { recursive: true, force: true });
  });

  it("names the provider's port and how to move it, and starts nothing", { timeout: 40_000 }, async () => {
    const free = await freePort();
    const result = await runDev({
      DATA_DIR: neverCreated,
      PORT: String(busyPort),
      EXAMPLE_PORT: String(free),
    });
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr.trim()).toBe(
      `dev: port ${busyPort} (PORT, the identity provider) is already in use by another program (is \`npm start\` or another \`npm run dev\` running?). Stop it, or move the identity provider: PORT=${busyPort + 100} npm run dev`,
    );
    expect(existsSync(neverCreated)).toBe(false);
  });

  it("names the example site's port and EXAMPLE_PORT, and both when both are taken", {
    timeout: 40_000,
  }, async () => {
    const free = await freePort();
    const site = await runDev({ DATA_DIR: neverCreated, PORT: String(free), EXAMPLE_PORT: String(busyPort) });
    expect(site.code).toBe(1);
    expect(site.stdout).not.toContain('Ready');
    expect(site.stderr.trim()).toMatch(
      new RegExp(
        `^dev: port ${busyPort} \\(EXAMPLE_PORT, the example site\\) is already in use .*move the example site: EXAMPLE_PORT=${busyPort + 100} npm run dev$`,
      ),
    );

    const second = http.createServer((_request, response) => response.end('yet another app'));
    await new Promise<void>((resolve) => second.listen(0, '127.0.0.1', resolve));
    try {
      const both = await runDev({
        DATA_DIR: neverCreated,
        PORT: String(busyPort),
        EXAMPLE_PORT: String((second.address() as AddressInfo).port),
      });
      expect(both.code).toBe(1);
      const lines = both.stderr.trim().split('\n');
      expect(lines).toHaveLength(2);
      expect(lines[0]).toMatch(/\(PORT, the identity provider\).* PORT=\d+ npm run dev$/);
      expect(lines[1]).toMatch(/\(EXAMPLE_PORT, the example site\).* EXAMPLE_PORT=\d+ npm run dev$/);
    } finally {
      await new Promise((resolve) => second.close(resolve));
    }
    expect(existsSync(neverCreated)).toBe(false);
  });

  it('refuses one port for both, and a port that is not one', { timeout: 40_000 }, async () => {
    const free = await freePort();
    const same = await runDev({ DATA_DIR: neverCreated, PORT: String(free), EXAMPLE_PORT: String(free) });
    expect(same.code).toBe(1);
    expect(same.stderr).toMatch(
      new RegExp(`PORT and EXAMPLE_PORT are both ${free}; .*EXAMPLE_PORT=\\d+ npm run dev`),
    );
    const wrong = await runDev({ DATA_DIR: neverCreated, EXAMPLE_PORT: 'eighty' });
    expect(wrong.code).toBe(1);
    expect(wrong.stderr.trim()).toBe('dev: EXAMPLE_PORT must be a port from 1 to 65535, got "eighty"');
    expect(existsSync(neverCreated)).toBe(false);
  });
});
