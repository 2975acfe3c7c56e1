import { Writable } from 'node:stream';
import type { FastifyBaseLogger } from 'fastify';
import type { Config } from '../../src/config.js';
import { createLogger } from '../../src/http/logger.js';

/**
 * The service's own logger (its redaction included) writing JSON lines into `lines` rather than to
 * stdout, for tests that read what a request or a step logged.
 */
export function capturedLogger(level: Config['LOG_LEVEL'] = 'info'): {
  logger: FastifyBaseLogger;
  lines: string[];
} {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      lines.push(String(chunk));
      done();
    },
  });
  return { logger: createLogger({ LOG_LEVEL: level, LOG_FORMAT: 'json' }, sink) as FastifyBaseLogger, lines };
}
