import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectRoot } from '../helpers/cli.js';
import { usingPostgres } from '../helpers/database.js';
import { freePort } from '../helpers/tcp-proxy.js';

/*
 * A newcomer with the README and nothing else, as CI starts: a fresh clone of this checkout's HEAD,
 * the README's run command (`npm ci && npm start`) and its check commands (the curls), read from
 * the clone's README.md so that the test runs what the README says, then SIGTERM and a clean exit.
 *
 * Two things differ from a person at a terminal, neither in the commands: the server listens on a
 * free port (PORT; the check commands' :3000 is rewritten to it), so that the test cannot collide
 * with whatever holds 3000; and npm's own settings (npm_config_prefer_offline, _audit, _fund) make
 * `npm ci` take the packages from npm's warm cache without asking the registry about each one.
 *
 * On this two-core machine, busy with other tests, it took 50 to 75 s, nearly all of it `npm ci`
 * (about 50 s alone, the compile of its prepare step included) and the first start (a new embedded
 * database and every migration); the clone takes 2 s, the checks and the stop about 1 s. The
 * limit, 5 minutes, leaves room for a machine busier still. On the embedded database only: that is what the
 * README's command runs.
 */

const RUN_LIMIT_MS = 5 * 60_000;
const exec = promisify(execFile);

let clone: string;
let readme: string;
let run: ChildProcess | undefined;
let output = '';
let exited: Promise<number | null>;
let port: number;

/** The ```sh blocks of a README section, each as its lines. */
function shellBlocks(markdown: string, heading: string): string[][] {
  const start = markdown.indexOf(`\n## ${heading}\n`);
  expect(start, `README.md has a "## ${heading}" section`).toBeGreaterThanOrEqual(0);
  const end = markdown.indexOf('\n## ', start + 1);
  const section = markdown.slice(start, end === -1 ? undefined : end);
  return [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((match) =>
    (match[1] as string)
      .split('\n')
      .map((line) => line.replace(/\s+#.*$/, '').trim())
      .filter(Boolean),
  );
}

/** The processes below `pid`, found in /proc (Linux), with their command lines. */
async function descendants(pid: number): Promise<Array<{ pid: number; command: string }>> {
  const children = await readFile(`/proc/${pid}/task/${pid}/children`, 'utf8').catch(() => '');
  const found: Array<{ pid: number; command: string }> = [];
  for (const child of children.split(/\s+/).filter(Boolean).map(Number)) {
    const command = await readFile(`/proc/${child}/cmdline`, 'utf8').catch(() => '');
    found.push({ pid: child, command: command.split('\0').join(' ') }, ...(await descendants(child)));
  }
  return found;
}

describe.skipIf(usingPostgres)('the README, followed from a fresh clone', () => {
  beforeAll(async () => {
    clone = await mkdtemp(path.join(os.tmpdir(), 'idp-newcomer-'));
    // HEAD exactly, whatever branch is checked out (or none, as in CI).
    const { stdout: head } = await exec('git', ['rev-parse', 'HEAD'], { cwd: projectRoot });
    await exec('git', ['clone', '--quiet', '--no-checkout', projectRoot, clone]);
    await exec('git', ['checkout', '--quiet', '--detach', head.trim()], { cwd: clone });
    readme = readFileSync(path.join(clone, 'README.md'), 'utf8');
    port = await freePort();
  });

  afterAll(async () => {
    // Whatever a failed test left running: the whole group the run command started.
    if (run?.pid && run.exitCode === null && run.signalCode === null) {
      try {
        process.kill(-run.pid, 'SIGKILL');
      } catch {
        // already gone
      }
      await exited;
    }
    if (clone) await rm(clone, { recursive: true, force: true });
  });

  it('"npm ci && npm start" installs, builds and serves', { timeout: RUN_LIMIT_MS }, async () => {
    // The section's first block, whatever it grows into, as long as it installs and starts.
    const command = (shellBlocks(readme, 'Run it')[0] ?? []).join('\n');
    expect(command).toMatch(/\bnpm ci\b[\s\S]*\bnpm start$/);
    const env: Record<string, string> = {
      // The Node.js this suite runs on (CI's 24) and its npm, first.
      PATH: `${path.dirname(process.execPath)}:${process.env.PATH ?? ''}`,
      HOME: process.env.HOME ?? os.homedir(),
      PORT: String(port),
      npm_config_prefer_offline: 'true',
      npm_config_audit: 'false',
      npm_config_fund: 'false',
      npm_config_update_notifier: 'false',
    };
    // CI points native builds at its Node's headers (argon2's fallback): keep that.
    if (process.env.npm_config_nodedir) env.npm_config_nodedir = process.env.npm_config_nodedir;
    // Its own process group: the test can end all of it, whatever fails.
    run = spawn('sh', ['-c', command], {
      cwd: clone,
      env,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const child = run;
    exited = new Promise((resolve) => child.once('exit', (code) => resolve(code)));
    for (const stream of [child.stdout, child.stderr])
      stream?.setEncoding('utf8').on('data', (chunk: string) => {
        output += chunk;
      });

    // Answered by this server: anything else on the port would have made it exit.
    const deadline = Date.now() + RUN_LIMIT_MS - 10_000;
    for (;;) {
      if (child.exitCode !== null) throw new Error(`"${command}" exited with ${child.exitCode}:\n${output}`);
      if (Date.now() > deadline) throw new Error(`"${command}" did not serve in time:\n${output}`);
      const answered = await fetch(`http://127.0.0.1:${port}/health/ready`).then(
        (response) => response.ok,
        () => false,
      );
      if (answered) break;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  });

  it("answers the README's check commands", { timeout: 30_000 }, async () => {
    const checks = shellBlocks(readme, 'Run it').find((lines) =>
      lines.some((line) => line.startsWith('curl ')),
    );
    expect(checks).toEqual([
      expect.stringMatching(/^curl \S+:3000\/api\/v1\/platform\/status$/),
      expect.stringMatching(/^curl \S+:3000\/api\/v1\/$/),
    ]);
    const [status, catalogue] = await Promise.all(
      (checks as string[]).map(async (line) => {
        const { stdout } = await exec('sh', ['-c', line.replaceAll(':3000/', `:${port}/`)], { cwd: clone });
        return JSON.parse(stdout) as Record<string, unknown>;
      }),
    );
    expect(status).toMatchObject({ ok: true, status: 'operational' });
    expect(catalogue).toMatchObject({ ok: true, version: 'v1' });
    expect(catalogue?.routes).toContainEqual(
      expect.objectContaining({ method: 'GET', path: '/api/v1/platform/status' }),
    );
  });

  it('stops on SIGTERM with a clean exit, and npm start with it', { timeout: 30_000 }, async () => {
    const started = run as ChildProcess;
    // The node process itself, not the shell npm runs the script in (its command line names it too).
    const server = (await descendants(started.pid as number)).find(
      (candidate) =>
        path.basename(candidate.command.split(' ')[0] ?? '') === 'node' &&
        candidate.command.includes('bin/server.js'),
    );
    expect(server, `the server's process under "npm start":\n${output}`).toBeDefined();
    // A service manager stops the server itself; npm start then exits with the server's status.
    process.kill(server?.pid as number, 'SIGTERM');
    expect(await exited, output).toBe(0);
    const refused = await fetch(`http://127.0.0.1:${port}/health/ready`).then(
      () => false,
      () => true,
    );
    expect(refused).toBe(true);
  });
});
