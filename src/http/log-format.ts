import type { DestinationStream } from 'pino';
import { isColorSupported, prettyFactory } from 'pino-pretty';

/** How log lines are written: JSON for machines, or one readable line each for a person. */
export type LogFormat = 'pretty' | 'json';

/** Where lines go: the process's stdout, or a stand-in in tests. */
export type LogOutput = DestinationStream & { isTTY?: boolean };

/** LOG_FORMAT, or when it is unset: readable on a terminal, JSON anywhere else (a pipe, a file). */
export function chooseLogFormat(setting: LogFormat | undefined, output: { isTTY?: boolean }): LogFormat {
  return setting ?? (output.isTTY === true ? 'pretty' : 'json');
}

/** The request line's own fields, which its readable message says in words. */
const REQUEST_FIELDS = ['method', 'url', 'statusCode', 'responseTime'] as const;

/** Fields shown first after the message, in this order; the rest follow as they come. */
const LEADING_FIELDS = ['error', 'error_description', 'error_detail', 'client_id', 'user_id'];

/** Fields a reader of a terminal does not need: the line's own metadata. */
const HIDDEN_FIELDS = new Set(['level', 'time', 'pid', 'hostname', 'msg']);

/** `key=value`, the value quoted (as JSON) when it has a space, a quote or an `=`. */
function pair(key: string, value: string | number | boolean | null): string {
  const text = String(value);
  return `${key}=${typeof value === 'string' && !/^[^\s"=]+$/.test(text) ? JSON.stringify(text) : text}`;
}

const isScalar = (value: unknown): value is string | number | boolean | null =>
  value === null || ['string', 'number', 'boolean'].includes(typeof value);

/**
 * One JSON line as a person reads it: a request line as `GET /path 200 3.1ms`, then every other
 * scalar field (and list of them) as `key=value`, the request id last; objects and errors (with
 * their stack) are left to pino-pretty, which prints them below the line.
 */
export function readableLine(line: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const words: string[] = [];
  const isRequestLine = typeof line.method === 'string' && typeof line.statusCode === 'number';
  if (isRequestLine) {
    words.push(`${line.method} ${line.url} ${line.statusCode} ${line.responseTime}ms`);
  } else if (line.msg !== undefined) {
    words.push(String(line.msg));
  }
  const keys = [
    ...LEADING_FIELDS.filter((key) => key in line),
    ...Object.keys(line).filter((key) => !LEADING_FIELDS.includes(key) && key !== 'reqId'),
    ...('reqId' in line ? ['reqId'] : []),
  ];
  for (const key of keys) {
    const value = line[key];
    if (HIDDEN_FIELDS.has(key) || (isRequestLine && (REQUEST_FIELDS as readonly string[]).includes(key))) {
      if (key === 'level' || key === 'time') out[key] = value;
      continue;
    }
    if (isScalar(value)) words.push(pair(key, value));
    // A list of names (the migrations applied) on the line, rather than one line each.
    else if (Array.isArray(value) && value.every(isScalar)) words.push(pair(key, value.join(',')));
    else out[key] = value;
  }
  out.msg = words.join(' ');
  return out;
}

/**
 * A destination that writes each line readably, synchronously, to `output`: pino-pretty's
 * formatter called in this thread rather than as a worker-thread transport, so a line logged just
 * before the process exits is written. pino has redacted secrets before a line gets here.
 * Colours only when the output is a terminal that takes them (NO_COLOR turns them off).
 */
export function prettyDestination(
  output: DestinationStream,
  options: { colour: boolean },
): DestinationStream {
  const format = prettyFactory({
    colorize: options.colour && isColorSupported,
    translateTime: 'SYS:HH:MM:ss.l',
    ignore: 'pid,hostname',
    errorLikeObjectKeys: ['err'],
  });
  return {
    write(line: string) {
      let parsed: unknown;
      try {
        parsed = JSON.parse(line);
      } catch {
        output.write(line);
        return;
      }
      const text =
        parsed !== null && typeof parsed === 'object'
          ? format(readableLine(parsed as Record<string, unknown>))
          : line;
      output.write(text);
    },
  };
}
