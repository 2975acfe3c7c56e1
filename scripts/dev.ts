/**
 * `npm run dev`: the identity provider, its demo client and user, and the example site together,
 * for trying the service on a development machine. Each process's lines are prefixed with its
 * name; the provider logs in its readable format. Ctrl-C stops both.
 *
 * Environment: PORT (the provider, default 3000), EXAMPLE_PORT (the site, default 4000), and
 * everything the provider reads (DATA_DIR, DATABASE_URL, …) as `npm start` does.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { promisify } from 'node:util';

const root = path.resolve(import.meta.dirname, '..');
const providerPort = Number(process.env.PORT || 3000);
const examplePort = Number(process.env.EXAMPLE_PORT || 4000);
const providerUrl = `http://localhost:${providerPort}`;
const exampleUrl = `http://localhost:${examplePort}`;

if (process.env.NODE_ENV === 'production') {
  console.error(
    'dev: npm run dev is for a development machine (it creates the demo user); NODE_ENV is production',
  );
  process.exit(1);
}

const children = new Set<ChildProcess>();
let stopping = false;

/** Starts a child whose output lines are prefixed with `name`; if it exits first, everything stops. */
function start(name: string, args: string[], env: Record<string, string>): ChildProcess {
  const child = spawn(process.execPath, args, {
    cwd: root,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  const prefix = `${name.padEnd(4)} │ `;
  for (const stream of [child.stdout, child.stderr]) {
    if (stream)
      createInterface({ input: stream }).on('line', (line) => process.stdout.write(prefix + line + '\n'));
  }
  child.once('exit', (code, signal) => {
    children.delete(child);
    if (!stopping) {
      console.error(`dev: ${name} stopped (${signal ?? `exit code ${code}`}); stopping the rest`);
      void stop(1);
    }
  });
  return child;
}

async function stop(code: number): Promise<never> {
  stopping = true;
  await Promise.all(
    [...children].map(
      (child) =>
        new Promise<void>((resolve) => {
          child.once('exit', () => resolve());
          child.kill('SIGTERM');
        }),
    ),
  );
  process.exit(code);
}

/** Waits until `url` answers 2xx (the provider's readiness route: database reachable, migrations done). */
async function waitFor(url: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (stopping) return;
    const ready = await fetch(url).then(
      (response) => response.ok,
      () => false,
    );
    if (ready) return;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`${url} did not answer within ${timeoutMs / 1000} s`);
}

async function main(): Promise<void> {
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => void stop(0));

  // The provider's own readable lines, whether or not this script's output is a terminal.
  start('idp', ['bin/server.js'], { PORT: String(providerPort), LOG_FORMAT: 'pretty' });
  await waitFor(`${providerUrl}/health/ready`, 60_000);

  // The demo client and user (found again on a second run, with a new client secret).
  const { stdout } = await promisify(execFile)(process.execPath, ['bin/idp.js', 'demo', '--json'], {
    cwd: root,
    env: { ...process.env, PORT: String(providerPort) },
  });
  const demo = JSON.parse(stdout) as {
    client: { client_id: string; client_secret: string };
    user: { username: string; password: string };
  };

  start('site', ['--import', 'tsx', 'examples/site/server.ts'], {
    PORT: String(examplePort),
    IDP_ISSUER: providerUrl,
    CLIENT_ID: demo.client.client_id,
    CLIENT_SECRET: demo.client.client_secret,
  });
  await waitFor(exampleUrl, 60_000);

  process.stdout.write(
    [
      '',
      'Ready. Open:',
      `  ${exampleUrl}    the example site: "Sign in" as ${demo.user.username} / ${demo.user.password}`,
      `  ${providerUrl}    the provider's start page`,
      `  ${providerUrl}/account    your account (after signing in)`,
      `  ${providerUrl}/api/v1/docs    the API reference`,
      'Ctrl-C stops both.',
      '',
    ].join('\n'),
  );
}

main().catch(async (error: unknown) => {
  console.error(`dev: ${error instanceof Error ? error.message : String(error)}`);
  await stop(1);
});
