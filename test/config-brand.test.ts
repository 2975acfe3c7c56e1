import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config.js';
import { accentColorProblem } from '../src/config-brand.js';

/* The branding settings: BRAND_NAME, BRAND_LOGO_URL and BRAND_ACCENT_COLOR, checked at start-up. */

describe('branding settings', () => {
  it('default to the name the service has always had, no logo and no accent', () => {
    const config = loadConfig({});
    expect(config.BRAND_NAME).toBe('idp');
    expect(config.BRAND_LOGO_URL).toBeUndefined();
    expect(config.BRAND_ACCENT_COLOR).toBeUndefined();
  });

  it('take a name, an https or same-origin logo, and an accent dark enough for AA', () => {
    const config = loadConfig({
      BRAND_NAME: '  Northwind ID ',
      BRAND_LOGO_URL: 'https://cdn.example/logo.svg',
      BRAND_ACCENT_COLOR: '#0B5D1E',
    });
    expect(config.BRAND_NAME).toBe('Northwind ID');
    expect(config.BRAND_LOGO_URL).toBe('https://cdn.example/logo.svg');
    expect(config.BRAND_ACCENT_COLOR).toBe('#0B5D1E');
    expect(loadConfig({ BRAND_LOGO_URL: '/brand/logo.png' }).BRAND_LOGO_URL).toBe('/brand/logo.png');
  });

  it('name the brand as the default sender of e-mail, quoted when it must be (RFC 5322)', () => {
    const from = (name: string) =>
      loadConfig({ BRAND_NAME: name, PUBLIC_URL: 'https://id.example' }).MAIL_FROM;
    expect(from('Northwind ID')).toBe('Northwind ID <no-reply@id.example>');
    expect(from('Acme, Inc. "ID"')).toBe('"Acme, Inc. \\"ID\\"" <no-reply@id.example>');
    expect(loadConfig({ BRAND_NAME: 'X', MAIL_FROM: 'a@b.example' }).MAIL_FROM).toBe('a@b.example');
  });

  it('refuse an accent colour below 4.5:1 against the pages, saying the ratio and the rule', () => {
    // #1a56c4 (the pages' own blue) passes; #3b82f6 (a lighter blue) is 3.68:1 on white.
    expect(accentColorProblem('#1a56c4')).toBeNull();
    expect(accentColorProblem('#3b82f6')).toMatch(/^has a contrast ratio of 3\.6\d:1 against white/);
    // White passes nothing; a colour that is AA on white but not on the grey page background fails too.
    expect(accentColorProblem('#ffffff')).toMatch(/1\.00:1/);
    expect(accentColorProblem('#747474')).toMatch(/page background/);
    expect(() => loadConfig({ BRAND_ACCENT_COLOR: '#3b82f6' })).toThrow(ConfigError);
    expect(() => loadConfig({ BRAND_ACCENT_COLOR: '#3b82f6' })).toThrow(
      /^invalid configuration: BRAND_ACCENT_COLOR has a contrast ratio of 3\.\d\d:1 against white .*WCAG AA needs at least 4\.5:1/,
    );
  });

  it('refuse what is not a colour, a logo that is not https or a same-origin path, and a bad name', () => {
    for (const [name, value, message] of [
      ['BRAND_ACCENT_COLOR', 'blue', /#rrggbb/],
      ['BRAND_ACCENT_COLOR', '#12345', /#rrggbb/],
      ['BRAND_LOGO_URL', 'http://cdn.example/logo.svg', /https URL/],
      ['BRAND_LOGO_URL', '//cdn.example/logo.svg', /https URL/],
      ['BRAND_LOGO_URL', 'https://user:pw@cdn.example/logo.svg', /https URL/],
      ['BRAND_LOGO_URL', 'javascript:alert(1)', /https URL/],
      ['BRAND_NAME', 'x'.repeat(61), /at most 60/],
      ['BRAND_NAME', 'id\u202ep', /control or invisible/],
    ] as const)
      expect(() => loadConfig({ [name]: value }), `${name}=${value}`).toThrow(
        new RegExp(`${name} .*${message.source}`),
      );
  });
});
