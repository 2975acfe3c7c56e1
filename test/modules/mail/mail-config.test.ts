import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../../src/config.js';
import { describeMailError, startupMailWarning } from '../../../src/modules/mail/transport.js';

/* SMTP_URL and MAIL_FROM. */

describe('mail settings', () => {
  it('MAIL_FROM defaults to the name the pages give the service, at the host of PUBLIC_URL', () => {
    expect(loadConfig({ PUBLIC_URL: 'https://id.example.com/base' }).MAIL_FROM).toBe(
      'idp <no-reply@id.example.com>',
    );
    expect(loadConfig({ PORT: '4000' }).MAIL_FROM).toBe('idp <no-reply@localhost>');
    expect(loadConfig({ MAIL_FROM: 'Example <id@example.com>' }).MAIL_FROM).toBe('Example <id@example.com>');
    expect(loadConfig({ MAIL_FROM: 'id@example.com' }).MAIL_FROM).toBe('id@example.com');
  });

  it('takes smtp:// and smtps:// URLs only, and never repeats the value in its error', () => {
    expect(loadConfig({ SMTP_URL: 'smtp://user:pass@mail.example.com:587' }).SMTP_URL).toBe(
      'smtp://user:pass@mail.example.com:587',
    );
    expect(loadConfig({ SMTP_URL: 'smtps://mail.example.com' }).SMTP_URL).toBe('smtps://mail.example.com');
    expect(loadConfig({ SMTP_URL: '' }).SMTP_URL).toBeUndefined();
    for (const value of ['http://user:hunter22@mail.example.com', 'mail.example.com:25', 'smtp://']) {
      const load = () => loadConfig({ SMTP_URL: value });
      expect(load).toThrow(ConfigError);
      expect(load).toThrow(/SMTP_URL must be an smtp:\/\/ or smtps:\/\/ URL/);
      expect(load).not.toThrow(/hunter22/);
    }
    expect(() => loadConfig({ MAIL_FROM: 'not an address' })).toThrow(/MAIL_FROM/);
    expect(() => loadConfig({ MAIL_FROM: 'a@b.example\r\nBcc: c@d.example' })).toThrow(/MAIL_FROM/);
  });

  it('warns at start in production without SMTP_URL, and only then', () => {
    expect(startupMailWarning({ NODE_ENV: 'production', SMTP_URL: undefined })).toMatch(
      /SMTP_URL is not set/,
    );
    expect(
      startupMailWarning({ NODE_ENV: 'production', SMTP_URL: 'smtp://mail.example.com' }),
    ).toBeUndefined();
    expect(startupMailWarning({ NODE_ENV: 'development', SMTP_URL: undefined })).toBeUndefined();
  });

  it('keeps an SMTP error short, on one line, and without the SMTP password', () => {
    const config = { SMTP_URL: 'smtp://mailer:p%40ssw0rd@mail.example.com' };
    const error = Object.assign(new Error('Invalid login for p@ssw0rd\n535 5.7.8 rejected'), {
      code: 'EAUTH',
      responseCode: 535,
    });
    const text = describeMailError(error, config);
    expect(text).toBe('EAUTH 535: Invalid login for *** 535 5.7.8 rejected');
    expect(describeMailError(new Error('x'.repeat(2000)), config)).toHaveLength(500);
  });
});
