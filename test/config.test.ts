import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { assertServable, ConfigError, describeDatabaseTarget, loadConfig } from '../src/config.js';

describe('loadConfig', () => {
  it('has the contract defaults', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      NODE_ENV: 'development',
      HOST: '127.0.0.1',
      PORT: 3000,
      PUBLIC_URL: 'http://localhost:3000',
      DATA_DIR: path.resolve('./data'),
      TRUST_PROXY: false,
      RATE_LIMIT_PUBLIC_PER_MIN: 300,
      RATE_LIMIT_TOKEN_PER_MIN: 600,
      RATE_LIMIT_SIGNIN_PER_MIN: 60,
      RATE_LIMIT_ACCOUNT_PER_MIN: 10,
      RATE_LIMIT_BEARER_PER_MIN: 1200,
      RATE_LIMIT_FAILED_AUTH_PER_MIN: 100,
      cookieSecretIsDefault: true,
    });
    expect(config.DATABASE_URL).toBeUndefined();
    expect(config.REDIS_URL).toBeUndefined();
    expect(config.COOKIE_SECRET_PREVIOUS).toEqual([]);
  });

  it('reads COOKIE_SECRET_PREVIOUS as a comma-separated list, ignoring blanks', () => {
    const a = 'a'.repeat(32);
    const b = 'b'.repeat(40);
    expect(loadConfig({ COOKIE_SECRET_PREVIOUS: ` ${a} ,, ${b} ` }).COOKIE_SECRET_PREVIOUS).toEqual([a, b]);
  });

  it('is frozen', () => {
    const config = loadConfig({});
    expect(Object.isFrozen(config)).toBe(true);
    expect(() => {
      (config as { PORT: number }).PORT = 1;
    }).toThrow(TypeError);
  });

  it('derives PUBLIC_URL from PORT and drops a trailing slash from an explicit one', () => {
    expect(loadConfig({ PORT: '8080' }).PUBLIC_URL).toBe('http://localhost:8080');
    expect(loadConfig({ PUBLIC_URL: 'https://id.example.com/' }).PUBLIC_URL).toBe('https://id.example.com');
  });

  it('parses every setting', () => {
    const config = loadConfig({
      NODE_ENV: 'test',
      HOST: '0.0.0.0',
      PORT: '0',
      PUBLIC_URL: 'http://127.0.0.1:8080',
      DATABASE_URL: 'postgres://u:p@db:5432/idp',
      DATA_DIR: '/tmp/idp-data',
      REDIS_URL: 'redis://127.0.0.1:6379',
      COOKIE_SECRET: 'x'.repeat(32),
      TRUST_PROXY: '10.0.0.0/8, 127.0.0.1',
      LOG_LEVEL: 'warn',
      RATE_LIMIT_PUBLIC_PER_MIN: '0',
      RATE_LIMIT_TOKEN_PER_MIN: '5',
      RATE_LIMIT_SIGNIN_PER_MIN: '6',
      RATE_LIMIT_BEARER_PER_MIN: '7',
    });
    expect(config).toMatchObject({
      HOST: '0.0.0.0',
      PORT: 0,
      DATABASE_URL: 'postgres://u:p@db:5432/idp',
      DATA_DIR: '/tmp/idp-data',
      REDIS_URL: 'redis://127.0.0.1:6379',
      TRUST_PROXY: ['10.0.0.0/8', '127.0.0.1'],
      LOG_LEVEL: 'warn',
      RATE_LIMIT_PUBLIC_PER_MIN: 0,
      RATE_LIMIT_TOKEN_PER_MIN: 5,
      RATE_LIMIT_SIGNIN_PER_MIN: 6,
      RATE_LIMIT_BEARER_PER_MIN: 7,
      cookieSecretIsDefault: false,
    });
    expect(loadConfig({ TRUST_PROXY: 'true' }).TRUST_PROXY).toBe(true);
  });

  it('limits an account by RATE_LIMIT_SIGNIN_PER_MIN when only that is set, as before the per-IP count was split off', () => {
    expect(loadConfig({ RATE_LIMIT_SIGNIN_PER_MIN: '6' }).RATE_LIMIT_ACCOUNT_PER_MIN).toBe(6);
    // `0` still turns every sign-in limit off.
    expect(loadConfig({ RATE_LIMIT_SIGNIN_PER_MIN: '0' }).RATE_LIMIT_ACCOUNT_PER_MIN).toBe(0);
    expect(
      loadConfig({ RATE_LIMIT_SIGNIN_PER_MIN: '0', RATE_LIMIT_ACCOUNT_PER_MIN: '4' })
        .RATE_LIMIT_ACCOUNT_PER_MIN,
    ).toBe(4);
    expect(loadConfig({}).RATE_LIMIT_ACCOUNT_PER_MIN).toBe(10);
  });

  it('refuses PORT=0 without PUBLIC_URL: the issuer cannot come from a port not yet chosen', () => {
    expect(() => assertServable(loadConfig({ PORT: '0' }))).toThrow(/PUBLIC_URL must be set when PORT is 0/);
    expect(() => assertServable(loadConfig({ PORT: '0', PUBLIC_URL: 'https://id.example' }))).not.toThrow();
    expect(() => assertServable(loadConfig({}))).not.toThrow();
  });

  it('treats an empty variable as unset', () => {
    expect(loadConfig({ PORT: '', DATABASE_URL: '' })).toMatchObject({ PORT: 3000, DATABASE_URL: undefined });
  });

  it.each([
    [{ PORT: 'abc' }, /^invalid configuration: PORT must be a whole number from 0 to 65535$/],
    [{ PORT: '70000' }, /PORT must be at most 65535/],
    [{ PORT: '-1' }, /PORT must be a whole number/],
    [{ NODE_ENV: 'staging' }, /NODE_ENV must be development, production or test/],
    [{ PUBLIC_URL: 'ftp://x' }, /PUBLIC_URL must be an absolute http\(s\) URL/],
    [{ PUBLIC_URL: 'https://x/?a=1' }, /PUBLIC_URL must be an absolute http\(s\) URL without query/],
    [{ DATABASE_URL: 'mysql://x' }, /DATABASE_URL must be a postgres:\/\/ or postgresql:\/\/ URL/],
    [{ REDIS_URL: 'http://x' }, /REDIS_URL must be a redis:\/\/ or rediss:\/\/ URL/],
    [{ REDIS_KEY_PREFIX: 'idp prod' }, /REDIS_KEY_PREFIX must be 1 to 64 letters, digits or : . _ -/],
    [{ COOKIE_SECRET: 'short' }, /COOKIE_SECRET must be at least 32 characters/],
    [
      { COOKIE_SECRET_PREVIOUS: `${'x'.repeat(32)},short` },
      /COOKIE_SECRET_PREVIOUS must hold secrets of at least 32 characters each/,
    ],
    [{ TRUST_PROXY: 'everyone' }, /TRUST_PROXY must be true, false, or a comma-separated list/],
    [{ LOG_LEVEL: 'loud' }, /LOG_LEVEL must be one of/],
    [{ RATE_LIMIT_SIGNIN_PER_MIN: '1.5' }, /RATE_LIMIT_SIGNIN_PER_MIN must be a whole number/],
  ])('refuses %o with one line naming the setting', (env, message) => {
    let error: unknown;
    try {
      loadConfig(env);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toMatch(message);
    expect((error as Error).message).not.toContain('\n');
  });

  it('names every wrong setting at once, without echoing secret values', () => {
    expect(() => loadConfig({ PORT: 'x', COOKIE_SECRET: 'hunter2' })).toThrow(
      /PORT must be a whole number.*; COOKIE_SECRET must be at least 32 characters/,
    );
    // The refusal itself, read whole: `not.toThrow(/hunter2/)` alone would pass if nothing threw.
    let refusal: unknown;
    try {
      loadConfig({ COOKIE_SECRET: 'hunter2', COOKIE_SECRET_PREVIOUS: 'hunter3' });
    } catch (caught) {
      refusal = caught;
    }
    expect(refusal).toBeInstanceOf(ConfigError);
    expect((refusal as Error).message).toBe(
      'invalid configuration: COOKIE_SECRET must be at least 32 characters; COOKIE_SECRET_PREVIOUS must hold secrets of at least 32 characters each',
    );
  });

  describe('NODE_ENV=production', () => {
    const secret = 's'.repeat(40);
    it('refuses to start without COOKIE_SECRET', () => {
      expect(() => loadConfig({ NODE_ENV: 'production', PUBLIC_URL: 'https://id.example.com' })).toThrow(
        /refusing to start with NODE_ENV=production: COOKIE_SECRET must be set/,
      );
    });
    it('refuses a plain-http PUBLIC_URL that is not loopback', () => {
      expect(() =>
        loadConfig({ NODE_ENV: 'production', COOKIE_SECRET: secret, PUBLIC_URL: 'http://id.example.com' }),
      ).toThrow(/PUBLIC_URL must be https in production/);
    });
    it('accepts https, and plain http on loopback', () => {
      expect(
        loadConfig({ NODE_ENV: 'production', COOKIE_SECRET: secret, PUBLIC_URL: 'https://id.example.com' })
          .PUBLIC_URL,
      ).toBe('https://id.example.com');
      for (const url of ['http://localhost:3000', 'http://127.0.0.1:3000', 'http://[::1]:3000']) {
        expect(
          loadConfig({ NODE_ENV: 'production', COOKIE_SECRET: secret, PUBLIC_URL: url }).PUBLIC_URL,
        ).toBe(url);
      }
      expect(loadConfig({ NODE_ENV: 'production', COOKIE_SECRET: secret }).PUBLIC_URL).toBe(
        'http://localhost:3000',
      );
    });

    const production = {
      NODE_ENV: 'production',
      COOKIE_SECRET: secret,
      PUBLIC_URL: 'https://id.example.com',
    };
    it('refuses to serve without SMTP_URL, where mail would go to files and users wait for nothing', () => {
      let error: unknown;
      try {
        assertServable(loadConfig(production));
      } catch (caught) {
        error = caught;
      }
      expect(error).toBeInstanceOf(ConfigError);
      expect((error as Error).message).toMatch(
        /^refusing to start with NODE_ENV=production: SMTP_URL must be set \(smtp:.*\), or MAIL_DISABLED=1 to send no e-mail at all/,
      );
      expect((error as Error).message).not.toContain('\n');
      // The CLI does not send the outbox: it still runs there (idp mail outbox, idp users …).
      expect(loadConfig(production).SMTP_URL).toBeUndefined();
    });

    it('serves with SMTP_URL, or with MAIL_DISABLED=1 said explicitly', () => {
      const smtp = loadConfig({ ...production, SMTP_URL: 'smtps://mail.example.com' });
      expect(() => assertServable(smtp)).not.toThrow();
      expect(smtp.MAIL_DISABLED).toBe(false);
      for (const value of ['1', 'true']) {
        const disabled = loadConfig({ ...production, MAIL_DISABLED: value });
        expect(() => assertServable(disabled)).not.toThrow();
        expect(disabled.MAIL_DISABLED).toBe(true);
      }
      for (const value of ['0', 'false', '']) {
        const config = loadConfig({ ...production, MAIL_DISABLED: value });
        expect(config.MAIL_DISABLED).toBe(false);
        expect(() => assertServable(config)).toThrow(/SMTP_URL must be set/);
      }
    });
  });

  it('reads MAIL_DISABLED as 1/true or 0/false only, and refuses it beside SMTP_URL', () => {
    expect(loadConfig({}).MAIL_DISABLED).toBe(false);
    expect(() => loadConfig({ MAIL_DISABLED: 'yes' })).toThrow(
      /^invalid configuration: MAIL_DISABLED must be 1 \(or true\) to turn e-mail off, or 0 \(false\)$/,
    );
    expect(() => loadConfig({ MAIL_DISABLED: '1', SMTP_URL: 'smtp://mail.example.com' })).toThrow(
      /MAIL_DISABLED=1 and SMTP_URL contradict each other: unset one/,
    );
    // Outside production mail without SMTP_URL goes to DATA_DIR/outbox/: nothing to refuse.
    expect(() => assertServable(loadConfig({ NODE_ENV: 'development' }))).not.toThrow();
  });

  it('describes the database without its password', () => {
    expect(describeDatabaseTarget(loadConfig({ DATABASE_URL: 'postgres://idp:s3cret@db:5432/idp' }))).toBe(
      'PostgreSQL at postgres://idp@db:5432/idp',
    );
    expect(describeDatabaseTarget(loadConfig({ DATA_DIR: '/srv/idp' }))).toBe(
      'PGlite (embedded) at /srv/idp',
    );
  });
});
