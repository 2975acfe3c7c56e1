import { describe, expect, it } from 'vitest';
import { RETURN_TO_MAX_LENGTH, safeReturnPath } from '../../src/lib/return-to.js';

describe('safeReturnPath', () => {
  it.each([
    '/',
    '/account',
    '/account?tab=apps#top',
    '/api/v1/oauth/authorize?client_id=pk_x&scope=openid%20profile',
    '/caf%C3%A9',
    '/a/b/../c',
    '/a:b',
    `/${'a'.repeat(RETURN_TO_MAX_LENGTH - 1)}`,
  ])('accepts the same-origin path %j as it is', (path) => {
    expect(safeReturnPath(path)).toBe(path);
  });

  it.each([
    ['protocol-relative', '//evil.com'],
    ['protocol-relative with a path', '//evil.com/account'],
    ['backslash after the slash', '/\\evil.com'],
    ['a backslash anywhere', '/account\\..\\x'],
    ['an absolute URL', 'https://evil.com'],
    ['an absolute URL without slashes', 'https:evil.com'],
    ['a javascript: URL', 'javascript:alert(1)'],
    ['a data: URL', 'data:text/html,<script>alert(1)</script>'],
    ['a relative path', 'account'],
    ['a tab that browsers strip', '/\t/evil.com'],
    ['a newline that browsers strip', '/\n/evil.com'],
    ['a NUL', '/account\u0000'],
    ['a DEL', '/account\u007f'],
    ['a space', '/my account'],
    ['a non-ASCII character', '/café'],
    ['encoded slashes', '/%2F%2Fevil.com'],
    ['an encoded slash after the first', '/%2Fevil.com'],
    ['lower-case encoded slashes', '/%2f%2fevil.com'],
    ['an encoded backslash', '/%5Cevil.com'],
    ['an encoded backslash later on', '/account/%5C'],
    ['an encoded tab', '/%09/evil.com'],
    ['an encoded NUL', '/account%00'],
    ['doubly encoded slashes', '/%252F%252Fevil.com'],
    ['a malformed escape', '/account%E0%A4%A'],
    ['deeply nested encodings', '/%252525252525252F'],
    ['dot segments folding into a protocol-relative path', '/..//evil.com'],
    ['encoded dot segments folding into a protocol-relative path', '/%2e%2e//evil.com'],
    ['an empty string', ''],
    ['too long', `/${'a'.repeat(RETURN_TO_MAX_LENGTH)}`],
  ])('refuses %s', (_why, path) => {
    expect(safeReturnPath(path)).toBeNull();
  });

  it.each([undefined, null, 42, ['/account'], { path: '/account' }])('refuses the non-string %j', (value) => {
    expect(safeReturnPath(value)).toBeNull();
  });
});
