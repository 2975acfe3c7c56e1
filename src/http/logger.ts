import type { FastifyRequest } from 'fastify';
import pino, { type Logger } from 'pino';
import type { Config } from '../config.js';

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

/** pino with the request serializers and the redaction list of the service. */
export function createLogger(
  config: Pick<Config, 'LOG_LEVEL'>,
  destination?: pino.DestinationStream,
): Logger {
  return pino(
    {
      level: config.LOG_LEVEL,
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
        err: pino.stdSerializers.err,
      },
    },
    destination,
  );
}
