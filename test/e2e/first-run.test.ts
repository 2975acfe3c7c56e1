import { Writable } from 'node:stream';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { logFirstRunHint } from '../../src/first-run.js';
import { cliDatabase, parseJsonOutput, runIdp, startServer, stopAllChildren } from '../helpers/cli.js';
import { usingPostgres } from '../helpers/database.js';

/**
 * The first `npm start`: on a database without any client, the line after "Server listening"
 * says what to do next (`npx idp demo`) and where the discovery document is. Once a client is
 * registered, the server says nothing of the kind.
 */
let env: Record<string, string>;
const cleanup: Array<() => Promise<unknown>> = [];

beforeAll(async () => {
  // A copy of the migrated template, without any client as after a first start: the server has
  // no initdb or migration to run (test/e2e/server.test.ts starts on an empty one).
  const database = await cliDatabase('idp-first-run-');
  cleanup.push(database.drop);
  env = database.env;
  Object.assign(env, { HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'info' });
});

afterAll(async () => {
  await stopAllChildren();
  for (const step of cleanup.reverse()) await step();
});

interface LogLine {
  level: number;
  msg: string;
  [field: string]: unknown;
}

function logLines(stdout: string): LogLine[] {
  return stdout
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as LogLine);
}

describe(`the first-run hint on ${usingPostgres ? 'PostgreSQL' : 'PGlite'}`, () => {
  it('follows the listening line on an empty database, and is gone once a client exists', {
    timeout: 120_000,
  }, async () => {
    const first = await startServer({ env });
    const discoveryUrl = `${first.url}/.well-known/openid-configuration`;
    // Written right after the listening line, possibly in a later chunk of the pipe.
    const deadline = Date.now() + 5_000;
    while (!first.output().stdout.includes('"first_run":true') && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const lines = logLines(first.output().stdout);
    const listening = lines.findIndex((line) => line.msg.startsWith('Server listening at'));
    const hint = lines[listening + 1];
    expect(hint).toMatchObject({
      level: 30,
      first_run: true,
      next_step: 'npx idp demo',
      discovery_url: discoveryUrl,
    });
    expect(hint?.msg).toContain('npx idp demo');
    expect(hint?.msg).toContain(`discovery document: ${discoveryUrl}`);
    expect((await fetch(discoveryUrl)).status).toBe(200);

    const created = parseJsonOutput(
      await runIdp(
        [
          'clients',
          'create',
          '--name',
          'First site',
          '--site-url',
          'https://first.example',
          '--redirect-uri',
          'https://first.example/callback',
          '--json',
        ],
        { env },
      ),
    );
    expect(created.client_id).toMatch(/^pk_/);
    expect(await first.stop()).toEqual({ code: 0, signal: null });

    const second = await startServer({ env });
    expect((await fetch(`${second.url}/health/ready`)).status).toBe(200);
    expect(await second.stop()).toEqual({ code: 0, signal: null });
    const output = second.output().stdout;
    expect(output).toContain('"msg":"stopped"');
    expect(output).not.toContain('first_run');
    expect(output).not.toContain('npx idp demo');
  });
});

describe('logFirstRunHint', () => {
  function capture(level: string) {
    let logged = '';
    const stream = new Writable({
      write(chunk, _encoding, done) {
        logged += String(chunk);
        done();
      },
    });
    let printed = '';
    const out = (isTTY: boolean) => ({
      isTTY,
      write: (text: string) => {
        printed += text;
      },
    });
    return { logger: pino({ level }, stream), out, logged: () => logged, printed: () => printed };
  }

  it('adds plain lines when stdout is a terminal', () => {
    const tty = capture('info');
    logFirstRunHint('http://localhost:3000', tty.logger, tty.out(true));
    expect(tty.printed()).toBe(
      [
        'No client is registered yet. Next step, in another terminal:',
        '  npx idp demo      a demo site and user to sign in with (or: npx idp clients create --help)',
        '  Discovery document: http://localhost:3000/.well-known/openid-configuration',
        '',
      ].join('\n'),
    );
    expect(tty.logged()).toContain('"first_run":true');

    const piped = capture('info');
    logFirstRunHint('http://localhost:3000', piped.logger, piped.out(false));
    expect(piped.printed()).toBe('');
    expect(piped.logged()).toContain('"first_run":true');
  });

  it('names client registration in production, where idp demo is refused', () => {
    const tty = capture('info');
    logFirstRunHint('https://id.example', tty.logger, tty.out(true), true);
    expect(tty.printed()).toContain('  npx idp clients create --help      how to register the first site');
    expect(tty.printed()).not.toContain('idp demo');
    expect(tty.logged()).toContain('"next_step":"npx idp clients create --help"');
    expect(tty.logged()).not.toContain('idp demo');
  });

  it('says nothing when info lines are off', () => {
    const quiet = capture('warn');
    logFirstRunHint('http://localhost:3000', quiet.logger, quiet.out(true));
    expect(quiet.printed()).toBe('');
    expect(quiet.logged()).toBe('');
  });
});
