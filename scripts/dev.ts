/**
 * `npm run dev`: the identity provider, its demo client and user, and the example site together,
 * for trying the service on a development machine. Each process's lines are prefixed with its
 * name; the provider logs in its readable format. Ctrl-C stops both.
 *
 * Environment: PORT (the provider, default 3000), EXAMPLE_PORT (the site, default 4000), and
 * everything the provider reads (DATA_DIR, DATABASE_URL, …) as `npm start` does. Both ports are
 * checked before anything starts: a port another program holds is named, with the setting that
 * moves it, and nothing runs.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { promisify } from 'node:util';

const root = path.resolve(import.meta.dirname, '..');

if (process.env.NODE_ENV === 'production') {
  console.error(
    'dev: npm run dev is for a development machine (it creates the demo user); NODE_ENV is production',
  );
  process.exit(1);
}

/** The two ports: the setting that gives each, what listens there, and its default. */
const ports = [
  { setting: 'PORT', what: 'the identity provider', fallback: 3000 },
  { setting: 'EXAMPLE_PORT', what: 'the example site', fallback: 4000 },
].map((entry) => {
  const text = process.env[entry.setting] || String(entry.fallback);
  const port = /^\d{1,5}$/.test(text) ? Number(text) : Number.NaN;
  if (!(port >= 1 && port <= 65535)) {
    console.error(`dev: ${entry.setting} must be a port from 1 to 65535, got "${text}"`);
    process.exit(1);
  }
  return { ...entry, port };
});
const [provider, example] = ports as [(typeof ports)[number], (typeof ports)[number]];
const providerPort = provider.port;
const examplePort = example.port;
const providerUrl = `http://localhost:${providerPort}`;
const exampleUrl = `http://localhost:${examplePort}`;

/** Whether something accepts a connection on `host:port` (it would answer our readiness checks). */
function answers(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    socket.setTimeout(2_000);
    const done = (answered: boolean) => {
      socket.destroy();
      resolve(answered);
    };
    socket.once('connect', () => done(true));
    socket.once('timeout', () => done(false));
    socket.once('error', () => done(false));
  });
}

/** Whether `host:port` can be listened on: the error code when not. */
function bindError(host: string, port: number): Promise<string | undefined> {
  return new Promise((resolve) => {
    const probe = net.createServer();
    probe.once('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
    probe.listen({ host, port, exclusive: true }, () => probe.close(() => resolve(undefined)));
  });
}

/**
 * What keeps `npm run dev` from using its ports, one line each, or none. A port is taken when a
 * program answers on it at either loopback address (the URLs say localhost, which may be either),
 * or when it cannot be bound where the process will listen (HOST).
 */
async function portProblems(): Promise<string[]> {
  if (providerPort === examplePort)
    return [
      `dev: PORT and EXAMPLE_PORT are both ${providerPort}; give the example site another port, e.g. EXAMPLE_PORT=${examplePort === 4000 ? 4100 : 4000} npm run dev`,
    ];
  const host = process.env.HOST || '127.0.0.1';
  const problems: string[] = [];
  for (const { setting, what, port } of ports) {
    const taken = (await answers('127.0.0.1', port)) || (await answers('::1', port));
    const error = taken ? 'EADDRINUSE' : await bindError(host, port);
    if (!error) continue;
    const other = port + 100 <= 65535 ? port + 100 : port - 100;
    const why =
      error === 'EADDRINUSE'
        ? `is already in use by another program (is \`npm start\` or another \`npm run dev\` running?). Stop it, or move ${what}`
        : `cannot be listened on at ${host} (${error}). Choose another port for ${what}`;
    problems.push(`dev: port ${port} (${setting}, ${what}) ${why}: ${setting}=${other} npm run dev`);
  }
  return problems;
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
      createInterface({ input: stream }).on('line', (line) => process.stdout.write(`${prefix}${line}\n`));
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
  // Before anything starts: a busy port used to let another program answer the readiness check, so
  // "Ready" was printed for a provider that was not ours.
  const problems = await portProblems();
  if (problems.length > 0) {
    for (const problem of problems) console.error(problem);
    process.exit(1);
  }
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => void stop(0));

  // The provider's own readable lines, whether or not this script's output is a terminal.
  start('idp', ['bin/server.js'], { PORT: String(providerPort), LOG_FORMAT: 'pretty' });
  await waitFor(`${providerUrl}/health/ready`, 60_000);

  // The demo client and user (found again on a second run, with a new client secret).
  const demoArgs = ['bin/idp.js', 'demo', '--site-port', String(examplePort), '--json'];
  const { stdout } = await promisify(execFile)(process.execPath, demoArgs, {
    cwd: root,
    env: { ...process.env, PORT: String(providerPort) },
  });
  const demo = JSON.parse(stdout) as {
    client: { client_id: string; client_secret: string };
    user: { username: string; password: string };
  };

  start('site', ['--import', 'tsx', 'examples/site/server.ts'], {
    EXAMPLE_PORT: String(examplePort),
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
