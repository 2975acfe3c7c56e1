import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Writable } from 'node:stream';
import type { FastifyBaseLogger } from 'fastify';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { chooseLogFormat, readableLine } from '../../src/http/log-format.js';
import { createLogger } from '../../src/http/logger.js';
import { createTestApp } from '../helpers/app.js';

/** A stand-in for stdout: a terminal when `isTTY`, else a pipe. */
function output(isTTY: boolean) {
  const lines: string[] = [];
  const stream = Object.assign(
    new Writable({
      write(chunk, _encoding, done) {
        lines.push(String(chunk));
        done();
      },
    }),
    isTTY ? { isTTY: true } : {},
  );
  return { stream, text: () => lines.join('') };
}

const isJson = (text: string) =>
  text
    .trim()
    .split('\n')
    .every((line) => {
      try {
        return typeof JSON.parse(line) === 'object';
      } catch {
        return false;
      }
    });

describe('LOG_FORMAT', () => {
  it('is pretty or json, and unset by default', () => {
    expect(loadConfig({}).LOG_FORMAT).toBeUndefined();
    expect(loadConfig({ LOG_FORMAT: 'json' }).LOG_FORMAT).toBe('json');
    expect(() => loadConfig({ LOG_FORMAT: 'yaml' })).toThrow(/LOG_FORMAT must be pretty or json/);
  });

  it('unset: readable lines on a terminal, JSON on a pipe; set: that format anywhere', () => {
    expect(chooseLogFormat(undefined, { isTTY: true })).toBe('pretty');
    expect(chooseLogFormat(undefined, {})).toBe('json');
    expect(chooseLogFormat('json', { isTTY: true })).toBe('json');
    expect(chooseLogFormat('pretty', {})).toBe('pretty');

    const terminal = output(true);
    createLogger({ LOG_LEVEL: 'info' }, terminal.stream).info('hello');
    expect(terminal.text()).toMatch(/^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: hello\n$/);

    const pipe = output(false);
    createLogger({ LOG_LEVEL: 'info' }, pipe.stream).info('hello');
    expect(JSON.parse(pipe.text())).toMatchObject({ level: 30, msg: 'hello' });

    const forced = output(true);
    createLogger({ LOG_LEVEL: 'info', LOG_FORMAT: 'json' }, forced.stream).info('hello');
    expect(isJson(forced.text())).toBe(true);
  });
});

describe('readable lines', () => {
  it('are redacted as the JSON ones are, and not coloured off a terminal', () => {
    const out = output(false);
    createLogger({ LOG_LEVEL: 'info', LOG_FORMAT: 'pretty' }, out.stream).info(
      {
        req: { headers: { authorization: 'Bearer at_secret1', cookie: 'sid=secret2' } },
        body: { password: 'secret3', client_secret: 'secret4' },
        code: 'secret5',
        refresh_token: 'secret6',
      },
      'with secrets',
    );
    const text = out.text();
    expect(isJson(text)).toBe(false);
    expect(text).not.toMatch(/secret\d/);
    expect(text).toContain('[REDACTED]');
    expect(text).toContain('with secrets');
    // biome-ignore lint/suspicious/noControlCharactersInRegex: the escape that starts a colour
    expect(text).not.toMatch(/\u001b\[/);
  });

  it('say a request in words: method, URL, status, time, the refusal, the request id last', () => {
    expect(
      readableLine({
        level: 30,
        time: '2026-06-01T12:00:00.000Z',
        reqId: 'r-1',
        method: 'POST',
        url: '/api/v1/oauth/token',
        statusCode: 401,
        responseTime: 3.25,
        remoteAddress: '127.0.0.1',
        client_id: 'pk_1',
        error: 'invalid_client',
        error_description: 'Unknown client or wrong client secret.',
        msg: 'request completed',
      }),
    ).toEqual({
      level: 30,
      time: '2026-06-01T12:00:00.000Z',
      msg:
        'POST /api/v1/oauth/token 401 3.25ms error=invalid_client ' +
        'error_description="Unknown client or wrong client secret." client_id=pk_1 remoteAddress=127.0.0.1 reqId=r-1',
    });
    // Lists of names on the line; objects stay objects, for pino-pretty to print below it.
    expect(
      readableLine({ level: 30, msg: 'housekeeping', applied: ['0001_a', '0002_b'], purged: { codes: 2 } }),
    ).toEqual({ level: 30, msg: 'housekeeping applied=0001_a,0002_b', purged: { codes: 2 } });
  });

  it('as docs/operating.md shows them', () => {
    const guide = readFileSync(path.join(import.meta.dirname, '../../docs/operating.md'), 'utf8');
    const json =
      /<!-- log:request-line -->\n```json\n(.+)\n```\n\nOn a terminal the same line reads:\n\n```\n(.+)\n```/.exec(
        guide,
      );
    expect(json).not.toBeNull();
    const shown = readableLine(JSON.parse(json?.[1] as string));
    expect(json?.[2]).toBe(`[20:40:13.255] INFO: ${shown.msg}`);
  });

  it('of a whole app: one per request', async () => {
    const out = output(false);
    const t = await createTestApp({
      logger: createLogger({ LOG_LEVEL: 'info', LOG_FORMAT: 'pretty' }, out.stream) as FastifyBaseLogger,
    });
    try {
      const res = await t.app.inject({ method: 'GET', url: '/api/v1/oauth/userinfo' });
      expect(res.statusCode).toBe(401);
      const lines = out.text().trimEnd().split('\n');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(
        new RegExp(
          `^\\[\\d\\d:\\d\\d:\\d\\d\\.\\d{3}\\] INFO: GET /api/v1/oauth/userinfo 401 [\\d.]+ms error=unauthorized .* reqId=${res.headers['x-request-id']}$`,
        ),
      );
    } finally {
      await t.close();
    }
  });
});
