import path from 'node:path';
import { z } from 'zod';
import { brandSettings, mailbox } from './config-brand.js';
import { consoleSettings } from './config-console.js';
import { developerSettings } from './config-developers.js';
import { mailSettings, mailSettingsProblem } from './config-mail.js';
import { accountLimit, rateLimitSettings } from './config-rate-limits.js';

/**
 * Every setting, read once from the environment. Each description is the source of
 * the reference in docs/operating.md (`npm run docs:config`), so no setting goes undocumented.
 */
const integer = (min: number, max: number) =>
  z
    .string()
    .trim()
    .regex(/^\d+$/, `must be a whole number from ${min} to ${max}`)
    .transform(Number)
    .pipe(z.number().int().min(min, `must be at least ${min}`).max(max, `must be at most ${max}`));

const httpUrl = z
  .string()
  .trim()
  .refine((value) => {
    try {
      const url = new URL(value);
      return (
        (url.protocol === 'http:' || url.protocol === 'https:') && !url.search && !url.hash && !url.username
      );
    } catch {
      return false;
    }
  }, 'must be an absolute http(s) URL without query, fragment or credentials')
  .transform((value) => value.replace(/\/+$/, ''));

/**
 * TRUST_PROXY as Fastify takes it: off, on (trust every hop), or the proxies' addresses/CIDRs.
 * Naming the proxies is the safe choice: only they can set X-Forwarded-For.
 */
const trustProxy = z
  .string()
  .trim()
  .transform((value, ctx): boolean | string[] => {
    if (value === '' || value === 'false' || value === '0') return false;
    if (value === 'true' || value === '1') return true;
    const entries = value.split(',').map((entry) => entry.trim());
    if (entries.every((entry) => /^[0-9a-fA-F.:]+(\/\d{1,3})?$/.test(entry) || entry === 'loopback'))
      return entries;
    ctx.addIssue({
      code: 'custom',
      message: 'must be true, false, or a comma-separated list of proxy addresses/CIDRs',
    });
    return z.NEVER;
  });

export const settings = {
  NODE_ENV: z
    .enum(['development', 'production', 'test'], { message: 'must be development, production or test' })
    .default('development')
    .describe('`production` refuses insecure defaults (see below).'),
  HOST: z
    .string()
    .trim()
    .min(1)
    .default('127.0.0.1')
    .describe('Address to listen on (the Docker image sets `0.0.0.0`).'),
  PORT: integer(0, 65535).default(3000).describe('TCP port to listen on.'),
  PUBLIC_URL: httpUrl
    .optional()
    .describe('External base URL; the OIDC issuer and `{base_url}`. Default `http://localhost:$PORT`.'),
  DATABASE_URL: z
    .string()
    .trim()
    .regex(/^postgres(ql)?:\/\//, 'must be a postgres:// or postgresql:// URL')
    .optional()
    .describe('PostgreSQL connection URL. Unset: embedded PGlite under `DATA_DIR`.'),
  DATA_DIR: z
    .string()
    .trim()
    .min(1)
    .transform((value) => path.resolve(value))
    .prefault('./data')
    .describe('Where the embedded database lives (only without `DATABASE_URL`).'),
  DATABASE_POOL_MAX: integer(1, 1000)
    .default(10)
    .describe('Connections in the PostgreSQL pool, per instance.'),
  DATABASE_STATEMENT_TIMEOUT_MS: integer(0, 3_600_000)
    .default(10_000)
    .describe('PostgreSQL statement timeout in milliseconds (`0` turns it off).'),
  REDIS_URL: z
    .string()
    .trim()
    .regex(/^rediss?:\/\//, 'must be a redis:// or rediss:// URL')
    .optional()
    .describe(
      'Shared rate-limit store when several instances run; also where used DPoP proofs are remembered (else the database).',
    ),
  REDIS_KEY_PREFIX: z
    .string()
    .regex(/^[A-Za-z0-9:._-]{1,64}$/, 'must be 1 to 64 letters, digits or : . _ -')
    .default('idp:')
    .describe('Prefix of every key in Redis, so that deployments sharing one Redis keep their counts apart.'),
  COOKIE_SECRET: z
    .string()
    .min(32, 'must be at least 32 characters')
    .optional()
    .describe(
      "Secret of the CSRF tokens in the pages' forms (at least 32 characters); required in production. The same on every instance.",
    ),
  COOKIE_SECRET_PREVIOUS: z
    .string()
    .optional()
    .transform((value, context) => {
      const secrets = (value ?? '')
        .split(',')
        .map((secret) => secret.trim())
        .filter(Boolean);
      if (secrets.some((secret) => secret.length < 32)) {
        context.addIssue({ code: 'custom', message: 'must hold secrets of at least 32 characters each' });
        return z.NEVER;
      }
      return secrets;
    })
    .describe(
      'Former `COOKIE_SECRET`s, comma-separated: forms issued with them are still accepted, so a secret can be rotated without failing open forms (see docs/operating.md).',
    ),
  TRUST_PROXY: trustProxy
    .default(false)
    .describe(
      'Honour `X-Forwarded-For`/`-Proto` from: `false` (default), `true` (any peer), or proxy addresses/CIDRs.',
    ),
  ...mailSettings,
  ...consoleSettings,
  ...developerSettings,
  LOG_LEVEL: z
    .enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], {
      message: 'must be one of fatal, error, warn, info, debug, trace, silent',
    })
    .default('info')
    .describe('pino log level.'),
  LOG_FORMAT: z
    .enum(['pretty', 'json'], { message: 'must be pretty or json' })
    .optional()
    .describe(
      '`json`: one JSON object per line; `pretty`: readable lines. Unset: `pretty` when stdout is a terminal, `json` otherwise (a pipe, a file, a container log).',
    ),
  SIGN_IN_MAX_ATTEMPTS: integer(1, 1000)
    .default(10)
    .describe(
      'Failed password checks allowed per account in `SIGN_IN_WINDOW_SECONDS`, counted separately for each browser or app device that signed in to the account before and for everyone else together (sign-in page and mobile verify); past that, that group is locked out until the window ends, and its attempts are answered like a wrong password.',
    ),
  SIGN_IN_WINDOW_SECONDS: integer(1, 86_400)
    .default(900)
    .describe('The window of `SIGN_IN_MAX_ATTEMPTS`, from the first failed attempt.'),
  SECOND_FACTOR_MAX_FAILURES: integer(1, 1000)
    .default(20)
    .describe('Wrong second-step codes in a row per account, across windows (docs/pages.md "Limits").'),
  ACCESS_TOKEN_TTL_SECONDS: integer(60, 31_536_000)
    .default(7_776_000)
    .describe('Access token lifetime (7776000: 90 days, the `expires_in` sites expect).'),
  REFRESH_TOKEN_TTL_SECONDS: integer(60, 63_072_000)
    .default(15_552_000)
    .describe('Refresh token lifetime (180 days); each use rotates it.'),
  SESSION_TTL_SECONDS: integer(60, 31_536_000)
    .default(1_209_600)
    .describe('Browser sign-in session lifetime (14 days).'),
  REAUTH_MAX_AGE_SECONDS: integer(30, 3600)
    .default(300)
    .describe(
      'How recent a sign-in or re-authentication must be to change second factors, passkeys, recovery codes or the e-mail address, export or delete the account (5 minutes).',
    ),
  METRICS_TOKEN: z
    .string()
    .min(32, 'must be at least 32 characters')
    .optional()
    .describe(
      'Turns on `GET /metrics` (Prometheus), answered only to `Authorization: Bearer <METRICS_TOKEN>`; unset, there is no such route.',
    ),
  HOUSEKEEPING_INTERVAL_SECONDS: integer(0, 86_400)
    .default(600)
    .describe(
      'How often each instance deletes expired codes, tokens, sessions, challenges, idempotency keys and sign-in counts, in batches (`0`: never).',
    ),
  ROLLUPS_RETENTION_DAYS: integer(1, 3_650)
    .default(35)
    .describe(
      "How many days the per-minute counters of the console's charts are kept; the housekeeping purge deletes older minutes (35: the week chart and a month's comparison).",
    ),
  SHUTDOWN_TIMEOUT_MS: integer(0, 600_000)
    .default(10_000)
    .describe('How long a SIGTERM waits for in-flight requests before closing anyway.'),
  HTTP_REQUEST_TIMEOUT_MS: integer(1_000, 600_000)
    .default(30_000)
    .describe(
      'How long a client has to send a whole request, headers and body; a slower one gets `408` and its connection is closed (within a second more), so slow senders cannot hold a server reached without a proxy.',
    ),
  ...rateLimitSettings,
  ...brandSettings,
} as const;

const schema = z.object(settings);

type Parsed = z.output<typeof schema>;

export type Config = Readonly<
  Omit<Parsed, 'PUBLIC_URL' | 'COOKIE_SECRET' | 'MAIL_FROM' | 'RATE_LIMIT_ACCOUNT_PER_MIN'> & {
    PUBLIC_URL: string;
    RATE_LIMIT_ACCOUNT_PER_MIN: number;
    COOKIE_SECRET: string;
    MAIL_FROM: string;
    /** True when COOKIE_SECRET was not set and the development default is in use. */
    cookieSecretIsDefault: boolean;
    /** True when PUBLIC_URL was not set and is derived from PORT. */
    publicUrlIsDefault: boolean;
  }
>;

/** A development-only secret; `NODE_ENV=production` refuses to start with it. */
const DEVELOPMENT_COOKIE_SECRET = 'insecure-development-cookie-secret-do-not-use-in-production';

export class ConfigError extends Error {
  override name = 'ConfigError';
}

function isLoopbackHost(hostname: string): boolean {
  return hostname === 'localhost' || hostname === '[::1]' || /^127(\.\d{1,3}){3}$/.test(hostname);
}

/**
 * Parses the environment into a frozen Config.
 * @throws ConfigError with one line naming each wrong setting and why (never its value: it may be a secret).
 */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  // An empty variable means "not set", as in most shells' `FOO= cmd`.
  const input = Object.fromEntries(
    Object.keys(settings).map((key) => [key, env[key] === '' ? undefined : env[key]]),
  );
  const result = schema.safeParse(input);
  if (!result.success) {
    const problems = result.error.issues.map((issue) => `${issue.path.join('.')} ${issue.message}`);
    throw new ConfigError(`invalid configuration: ${problems.join('; ')}`);
  }
  const parsed = result.data;
  if (parsed.MAIL_DISABLED && parsed.SMTP_URL)
    throw new ConfigError(
      'invalid configuration: MAIL_DISABLED=1 and SMTP_URL contradict each other: unset one',
    );
  const publicUrl = parsed.PUBLIC_URL ?? `http://localhost:${parsed.PORT}`;

  if (parsed.NODE_ENV === 'production') {
    const problems: string[] = [];
    if (!parsed.COOKIE_SECRET) problems.push('COOKIE_SECRET must be set in production');
    const url = new URL(publicUrl);
    if (url.protocol === 'http:' && !isLoopbackHost(url.hostname)) {
      problems.push('PUBLIC_URL must be https in production (plain http is allowed for loopback only)');
    }
    if (problems.length > 0)
      throw new ConfigError(`refusing to start with NODE_ENV=production: ${problems.join('; ')}`);
  }

  return Object.freeze({
    ...parsed,
    PUBLIC_URL: publicUrl,
    RATE_LIMIT_ACCOUNT_PER_MIN: accountLimit(parsed, env),
    COOKIE_SECRET: parsed.COOKIE_SECRET ?? DEVELOPMENT_COOKIE_SECRET,
    MAIL_FROM: parsed.MAIL_FROM ?? mailbox(parsed.BRAND_NAME, `no-reply@${new URL(publicUrl).hostname}`),
    cookieSecretIsDefault: !parsed.COOKIE_SECRET,
    publicUrlIsDefault: !parsed.PUBLIC_URL,
  });
}

/**
 * Settings that only a server refuses: the CLI does not listen, and sends no queued mail (an
 * operator can still run `idp mail outbox` on a production database without SMTP_URL).
 * @throws ConfigError
 */
export function assertServable(config: Config): void {
  if (config.PORT === 0 && config.publicUrlIsDefault) {
    // The issuer is derived from the port; a port the kernel has not chosen yet gives none.
    throw new ConfigError('invalid configuration: PUBLIC_URL must be set when PORT is 0 (any free port)');
  }
  const mailProblem = mailSettingsProblem(config);
  if (mailProblem) throw new ConfigError(mailProblem);
}

/** Where the service says its database lives, without credentials. */
export function describeDatabaseTarget(config: Pick<Config, 'DATABASE_URL' | 'DATA_DIR'>): string {
  if (!config.DATABASE_URL) return `PGlite (embedded) at ${config.DATA_DIR}`;
  const url = new URL(config.DATABASE_URL);
  const user = url.username ? `${decodeURIComponent(url.username)}@` : '';
  return `PostgreSQL at ${url.protocol}//${user}${url.host}${url.pathname}`;
}
