import type { FastifyRequest } from 'fastify';
import pino, { type Logger } from 'pino';
import type { Config } from '../config.js';
import { chooseLogFormat, type LogOutput, prettyDestination } from './log-format.js';

/** Query parameters whose values never reach a log line. */
const SENSITIVE_QUERY_KEYS = new Set([
  'code',
  'access_token',
  'refresh_token',
  'id_token',
  'token',
  'client_secret',
  'password',
  'challenge',
  'signature',
  // Apple's answer at /signin/providers/{name}/callback: the person's name and address.
  'user',
]);

/** The request URL with the values of sensitive query parameters replaced by `[REDACTED]`. */
export function redactUrl(url: string): string {
  const query = url.indexOf('?');
  if (query === -1) return url;
  const params = new URLSearchParams(url.slice(query + 1));
  let changed = false;
  for (const key of new Set(params.keys())) {
    if (SENSITIVE_QUERY_KEYS.has(key.toLowerCase())) {
      params.set(key, '[REDACTED]');
      changed = true;
    }
  }
  return changed ? `${url.slice(0, query)}?${params.toString()}` : url;
}

const SECRET_FIELDS = [
  'password',
  'password_hash',
  'client_secret',
  'secret',
  'access_token',
  'refresh_token',
  'id_token',
  'code',
  'token',
  'cookie',
  'authorization',
];

/** Objects a log line may carry whose secret fields are redacted too (`body.password`, …). */
const LOGGED_CONTAINERS = ['body', 'query', 'params', 'headers', 'input', 'data', 'user', 'client', 'detail'];

/** PostgreSQL's error fields that name things (never a value), kept on a logged database error. */
const DATABASE_ERROR_FIELDS = [
  'code',
  'severity',
  'routine',
  'schema',
  'table',
  'column',
  'constraint',
] as const;

/** An error of PostgreSQL or PGlite: a five-character SQLSTATE and the server's own fields. */
function isDatabaseError(error: Record<string, unknown>): boolean {
  return typeof error.code === 'string' && /^[0-9A-Z]{5}$/.test(error.code) && 'severity' in error;
}

/** The statement, as it was prepared: its words and `$n` placeholders, with any literal blanked. */
function statementName(query: unknown): string | undefined {
  if (typeof query !== 'string') return undefined;
  return query
    .replace(/'(?:[^']|'')*'/g, "'?'")
    .replace(/\s+/g, ' ')
    .trim()
    .slice(0, 160);
}

/**
 * Errors as log lines. A database error keeps its SQLSTATE, the names of what it concerns and the
 * statement's text, and drops the rest: its message, `detail`, `where` and the query's parameters
 * can carry values (a username in "Key (…)=(alice)", a state or nonce in PGlite's `params`).
 * Causes are serialized the same way, each on its own, rather than folded into one message.
 */
export function serializeError(error: unknown, depth = 0): unknown {
  if (error === null || typeof error !== 'object' || depth > 5) return error;
  const fields = error as Record<string, unknown>;
  if (isDatabaseError(fields)) {
    const kept: Record<string, unknown> = { type: 'DatabaseError' };
    for (const name of DATABASE_ERROR_FIELDS) if (fields[name] !== undefined) kept[name] = fields[name];
    const statement = statementName(fields.query);
    if (statement) kept.statement = statement;
    // Where it was thrown, without the stack's first line (the message).
    if (typeof fields.stack === 'string') kept.stack = fields.stack.split('\n').slice(1).join('\n');
    return kept;
  }
  if (!(error instanceof Error)) return error;
  const out: Record<string, unknown> = {
    type: error.constructor?.name ?? error.name,
    message: error.message,
    stack: error.stack,
  };
  for (const [key, value] of Object.entries(error)) {
    if (key !== 'cause' && out[key] === undefined) out[key] = value;
  }
  if (error.cause !== undefined) out.cause = serializeError(error.cause, depth + 1);
  return out;
}

/**
 * pino with the request serializers and the redaction list of the service, writing JSON lines or
 * readable ones (`LOG_FORMAT`; unset: readable on a terminal). Redaction runs while pino writes
 * the line, so both formats get it; times are ISO 8601 in UTC.
 */
export function createLogger(
  config: Pick<Config, 'LOG_LEVEL'> & Partial<Pick<Config, 'LOG_FORMAT'>>,
  destination?: LogOutput,
): Logger {
  const output: LogOutput = destination ?? process.stdout;
  const pretty = config.LOG_LEVEL !== 'silent' && chooseLogFormat(config.LOG_FORMAT, output) === 'pretty';
  return pino(
    {
      level: config.LOG_LEVEL,
      timestamp: pino.stdTimeFunctions.isoTime,
      // Explicit paths rather than wildcards: pino applies a wildcard redaction to the bindings
      // of every child logger, that is, once per request; explicit paths cost only on the lines
      // that carry those keys.
      redact: {
        paths: [
          'req.headers.authorization',
          'req.headers.cookie',
          'res.headers["set-cookie"]',
          ...SECRET_FIELDS,
          ...LOGGED_CONTAINERS.flatMap((container) => SECRET_FIELDS.map((field) => `${container}.${field}`)),
        ],
        censor: '[REDACTED]',
      },
      serializers: {
        req: (req: FastifyRequest) => ({
          id: req.id,
          method: req.method,
          url: typeof req.url === 'string' ? redactUrl(req.url) : undefined,
          remoteAddress: req.ip,
        }),
        res: (res: { statusCode: number }) => ({ statusCode: res.statusCode }),
        err: serializeError,
      },
    },
    // Readable lines are written synchronously (see prettyDestination); JSON goes to stdout through
    // pino's own buffered destination, flushed at exit, unless a test gives its own.
    pretty
      ? prettyDestination(destination ?? pino.destination({ dest: 1, sync: true }), {
          colour: output.isTTY === true,
        })
      : destination,
  );
}
