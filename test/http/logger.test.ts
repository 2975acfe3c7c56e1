import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger, redactUrl } from '../../src/http/logger.js';

function capture() {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      lines.push(String(chunk));
      done();
    },
  });
  return { logger: createLogger({ LOG_LEVEL: 'info' }, sink), lines };
}

describe('logging', () => {
  it('redacts authorization, cookies, passwords, secrets and tokens', () => {
    const { logger, lines } = capture();
    logger.info({
      req: { headers: { authorization: 'Bearer at_secret1', cookie: 'sid=secret2' } },
      res: { headers: { 'set-cookie': 'sid=secret3' } },
      body: { password: 'secret4', client_secret: 'secret5', refresh_token: 'secret6', code: 'secret7' },
      access_token: 'secret8',
    });
    expect(lines.join('')).not.toMatch(/secret\d/);
    expect(lines.join('')).toContain('[REDACTED]');
  });

  it('redacts sensitive query parameters of request URLs', () => {
    expect(redactUrl('/cb?code=ac_123&state=xyz')).toBe('/cb?code=%5BREDACTED%5D&state=xyz');
    expect(redactUrl('/api/v1/oauth/userinfo?access_token=at_1')).not.toContain('at_1');
    expect(redactUrl('/api/v1/platform/status')).toBe('/api/v1/platform/status');
    expect(redactUrl('/x?q=hello')).toBe('/x?q=hello');
  });
});
