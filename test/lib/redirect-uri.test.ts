import { describe, expect, it } from 'vitest';
import { redirectUriMatches, redirectUriProblem } from '../../src/lib/redirect-uri.js';

const httpsSite = 'https://shop.example';
const devSite = 'http://localhost:8080';

describe('redirect URI registration rules', () => {
  it.each([
    ['https://shop.example/callback', httpsSite],
    ['https://shop.example/cb?tenant=1', httpsSite],
    ['http://127.0.0.1:8080/cb', httpsSite],
    ['http://[::1]/cb', httpsSite],
    ['http://localhost:3001/cb', httpsSite],
    ['com.example.app:/oauth2redirect', devSite],
  ])('accepts %s (site %s)', (uri, site) => {
    expect(redirectUriProblem(uri, site)).toBeNull();
  });

  it.each([
    ['/relative', /not an absolute URI/],
    ['https://shop.example/cb#frag', /fragment/],
    ['https://user:pw@shop.example/cb', /credentials/],
    ['http://shop.example/cb', /must use https/],
    ['http://127.0.0.2.example.com/cb', /must use https/],
    ['javascript:alert(1)', /forbidden scheme/],
    ['data:text/html,hi', /forbidden scheme/],
    ['com.example.app:/oauth2redirect', /custom scheme/],
  ])('refuses %s', (uri, reason) => {
    expect(redirectUriProblem(uri, httpsSite)).toMatch(reason);
  });
});

describe('redirectUriMatches', () => {
  const registered = ['https://shop.example/cb', 'http://127.0.0.1:8080/cb'];

  it.each([
    ['https://shop.example/cb', true],
    ['http://127.0.0.1:8080/cb', true],
    ['http://127.0.0.1:51234/cb', true],
    ['http://127.0.0.1/cb', true],
    ['http://127.0.0.1:65535/cb', true],
    ['http://127.0.0.1:65536/cb', false],
    ['http://127.0.0.1:99999/cb', false],
    ['http://127.0.0.1:8080/other', false],
    ['http://localhost:8080/cb', false],
    ['https://shop.example:8443/cb', false],
  ])('%s → %s', (uri, matches) => {
    expect(redirectUriMatches(registered, uri)).toBe(matches);
  });
});
