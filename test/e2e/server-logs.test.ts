import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliDatabase, projectRoot, startServer, stopAllChildren } from '../helpers/cli.js';
import { usingPostgres } from '../helpers/database.js';
import { freePort } from '../helpers/tcp-proxy.js';

/**
 * The server's log as an operator first sees it: `npm start` in a terminal writes readable lines,
 * the level coloured; piped (a container, a log collector) it writes JSON; LOG_FORMAT chooses.
 * Either way one line per request, with the reason of a refusal. The terminal is a real
 * pseudo-terminal, made by util-linux `script`.
 */
let env: Record<string, string>;
const cleanup: Array<() => Promise<unknown>> = [];
const children = new Set<ChildProcess>();

beforeAll(async () => {
  const database = await cliDatabase('idp-logs-', { HOST: '127.0.0.1', LOG_LEVEL: 'info' });
  cleanup.push(database.drop);
  env = database.env;
});

afterAll(async () => {
  for (const child of children) child.kill('SIGKILL');
  await stopAllChildren();
  for (const step of cleanup.reverse()) await step();
});

// biome-ignore lint/suspicious/noControlCharactersInRegex: terminal colour sequences
const ANSI = /\u001b\[[0-9;]*m/g;

/** `node bin/server.js` on a pseudo-terminal: what it writes, as the terminal shows it. */
async function startOnTerminal(extra: Record<string, string> = {}) {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  // `exec`: the server is script's own child, so that it can be sent SIGTERM by its pid.
  const child = spawn('/usr/bin/script', ['-qfec', `exec '${process.execPath}' bin/server.js`, '/dev/null'], {
    cwd: projectRoot,
    env: { ...env, TERM: 'xterm-256color', PORT: String(port), PUBLIC_URL: url, ...extra },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  children.add(child);
  let output = '';
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    output += chunk;
  });
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    output += chunk;
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const deadline = Date.now() + 60_000;
  while (!output.replace(ANSI, '').includes(`Server listening at ${url}`)) {
    if (Date.now() > deadline || child.exitCode !== null)
      throw new Error(`the server did not start:\n${output}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return {
    url,
    output: () => output,
    /** SIGTERM to the server itself, then its exit status (script passes it on). */
    stop: async () => {
      const pid = Number(readFileSync(`/proc/${child.pid}/task/${child.pid}/children`, 'utf8').trim());
      process.kill(pid, 'SIGTERM');
      return exited;
    },
  };
}

/** Waits until `text()` has a line matching `pattern` (a line can arrive after its response). */
async function lineMatching(text: () => string, pattern: RegExp): Promise<string> {
  const deadline = Date.now() + 5_000;
  for (;;) {
    const line = text()
      .split(/\r?\n/)
      .find((candidate) => pattern.test(candidate));
    if (line !== undefined) return line;
    if (Date.now() > deadline) throw new Error(`no line matches ${pattern}:\n${text()}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe(`the server's log on ${usingPostgres ? 'PostgreSQL' : 'PGlite'}`, () => {
  it('on a terminal: readable lines, the level coloured, one per request with its refusal', {
    timeout: 120_000,
  }, async () => {
    const server = await startOnTerminal();
    const res = await fetch(`${server.url}/api/v1/oauth/authorize?client_id=pk_unknown&response_type=code`);
    expect(res.status).toBe(400);
    const id = res.headers.get('x-request-id') as string;
    const line = await lineMatching(server.output, new RegExp(`reqId=${id}`));
    const plain = line.replace(ANSI, '');
    expect(plain).toMatch(
      /^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: GET \/api\/v1\/oauth\/authorize\?client_id=pk_unknown&response_type=code 400 [\d.]+ms error=invalid_request error_description="The client_id is not a registered application\." /,
    );
    // Green, as pino-pretty colours info.
    expect(line).toContain('\u001b[32mINFO\u001b[39m');
    expect(
      server
        .output()
        .split(/\r?\n/)
        .filter((text) => text.includes(id)),
    ).toHaveLength(1);
    expect(server.output()).not.toMatch(/^\{/m);
    expect(await server.stop()).toBe(0);
    // Written synchronously: the last line, logged just before the process exits, is there.
    expect(server.output().replace(ANSI, '')).toMatch(/INFO: stopped\r?\n/);
  });

  it('piped: one JSON line per request, with its fields', { timeout: 120_000 }, async () => {
    const server = await startServer({ env: { ...env, PORT: '0' } });
    try {
      const ok = await fetch(`${server.url}/api/v1/platform/status`);
      const refused = await fetch(`${server.url}/api/v1/oauth/token`, {
        method: 'POST',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          authorization: `Basic ${Buffer.from('pk_nobody:sk_secret1').toString('base64')}`,
        },
        body: 'grant_type=authorization_code&code=ac_secret2',
      });
      expect([ok.status, refused.status]).toEqual([200, 401]);
      const text = () => server.output().stdout;
      await lineMatching(text, new RegExp(refused.headers.get('x-request-id') as string));
      const lines = text()
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as Record<string, unknown>);
      const of = (res: Response) => lines.filter((line) => line.reqId === res.headers.get('x-request-id'));
      expect(of(ok)).toEqual([
        expect.objectContaining({
          level: 30,
          msg: 'request completed',
          method: 'GET',
          url: '/api/v1/platform/status',
          statusCode: 200,
          responseTime: expect.any(Number),
          remoteAddress: '127.0.0.1',
          time: expect.stringMatching(/^\d{4}-\d\d-\d\dT[\d:.]+Z$/),
        }),
      ]);
      expect(of(refused)).toEqual([
        expect.objectContaining({
          statusCode: 401,
          client_id: 'pk_nobody',
          error: 'invalid_client',
          error_description: expect.any(String),
        }),
      ]);
      expect(text()).not.toMatch(/secret[12]/);
      expect(text()).not.toContain('incoming request');
    } finally {
      await server.stop();
    }
  });

  it('on a terminal with LOG_FORMAT=json: JSON', { timeout: 120_000 }, async () => {
    const server = await startOnTerminal({ LOG_FORMAT: 'json' });
    const res = await fetch(`${server.url}/api/v1/platform/status`);
    const line = await lineMatching(server.output, new RegExp(res.headers.get('x-request-id') as string));
    expect(JSON.parse(line)).toMatchObject({
      msg: 'request completed',
      url: '/api/v1/platform/status',
      statusCode: 200,
    });
    expect(server.output()).not.toMatch(/^\[\d\d:\d\d:\d\d\.\d{3}\]/m);
    expect(await server.stop()).toBe(0);
  });
});
