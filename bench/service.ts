/**
 * The service under load and its database: its environment, its process, the build it runs, and
 * the state its database is left in between parts of the benchmark.
 */
import type { ChildProcess } from 'node:child_process';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { sql } from 'kysely';
// @ts-expect-error bin/ is plain JavaScript without declarations
import { SERVER_ENV, SERVER_NODE_FLAGS } from '../bin/launch.js';
import { projectRoot } from '../src/lib/paths.js';
import type { verifyLedger } from '../src/modules/wallet/wallet.service.js';
import { hasTaskset, startPinned } from './harness.js';

/** The services' COOKIE_SECRET: the load generator derives the DPoP nonces from it as they do. */
export const COOKIE_SECRET = randomBytes(32).toString('hex');

/** The environment of the service under load. */
export function serviceEnv(
  port: number,
  database: { DATABASE_URL: string } | { DATA_DIR: string },
): NodeJS.ProcessEnv {
  // The database is the one given here only: a DATABASE_URL or DATA_DIR of this process's own
  // environment (CI sets DATABASE_URL) must not point the PGlite server at PostgreSQL.
  const { DATABASE_URL: _url, DATA_DIR: _dir, ...inherited } = process.env;
  return {
    ...inherited,
    ...database,
    ...SERVER_ENV,
    IDP_RUN_BUILD: '1',
    PORT: String(port),
    HOST: '127.0.0.1',
    PUBLIC_URL: `http://127.0.0.1:${port}`,
    // No line per request: oidc-provider and the ceiling log nothing either.
    LOG_LEVEL: 'warn',
    NODE_ENV: 'production',
    COOKIE_SECRET,
    // No mail server: production refuses to start without one unless told that no mail is sent.
    MAIL_DISABLED: '1',
    // The limiter runs on every request, as in production, with limits a load test never reaches
    // (one load generator is one IP, and the hot-wallet scenario is one token).
    RATE_LIMIT_PUBLIC_PER_MIN: '1000000',
    RATE_LIMIT_TOKEN_PER_MIN: '1000000',
    RATE_LIMIT_BEARER_PER_MIN: '1000000',
    RATE_LIMIT_SIGNIN_PER_MIN: '1000000',
    RATE_LIMIT_FAILED_AUTH_PER_MIN: '1000000',
    SIGN_IN_MAX_ATTEMPTS: '1000',
  };
}

export function startService(env: NodeJS.ProcessEnv): ChildProcess {
  // BENCH_PROFILE=1: a V8 CPU profile of the server in bench/profiles/ (open it in Chrome DevTools).
  const profileArgs = process.env.BENCH_PROFILE ? ['--cpu-prof', '--cpu-prof-dir=bench/profiles'] : [];
  const child = startPinned(process.execPath, [...SERVER_NODE_FLAGS, ...profileArgs, 'bin/server.js'], env);
  // Read both streams to the end (a full pipe would stall the service's logger) and keep their
  // last lines: a service that dies under load says why.
  let tail = '';
  for (const stream of [child.stdout, child.stderr]) {
    stream?.setEncoding('utf8').on('data', (chunk: string) => {
      tail = (tail + chunk).slice(-4000);
    });
  }
  child.once('exit', (code, signal) => {
    if (code !== 0 && signal !== 'SIGTERM') console.error(`the service exited (${signal ?? code}):\n${tail}`);
  });
  return child;
}

/** Compiles the service: every server of the benchmark runs the build, as the image does. */
export function build(): void {
  execFileSync(path.join(projectRoot, 'node_modules', '.bin', 'tsc'), ['-p', 'tsconfig.build.json'], {
    cwd: projectRoot,
    stdio: 'inherit',
  });
}

/**
 * Each part starts from a database as autovacuum and the checkpointer would leave it between
 * bursts: the part before may have churned hundreds of thousands of rows (every code and refresh
 * token is used up), and their cleanup would otherwise land in the middle of the next part.
 */
export async function settle(db: Parameters<typeof verifyLedger>[0]): Promise<void> {
  await sql`vacuum analyze`.execute(db);
  await sql`checkpoint`.execute(db);
}

/** RSA-2048 signatures per second on core 0 (`openssl speed`): the floor of an RS256 id_token. */
export function rsaSignsPerSecond(seconds: number): number | null {
  try {
    const command = hasTaskset ? ['taskset', ['-c', '0', 'openssl']] : ['openssl', []];
    const output = execFileSync(
      command[0] as string,
      [...(command[1] as string[]), 'speed', '-seconds', String(seconds), 'rsa2048'],
      { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] },
    );
    const match = /^rsa\s+2048 bits\s+\S+\s+\S+\s+([\d.]+)/m.exec(output);
    return match?.[1] ? Number(match[1]) : null;
  } catch {
    return null;
  }
}
