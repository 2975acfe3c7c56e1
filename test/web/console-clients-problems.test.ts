import { describe, expect, it } from 'vitest';
import {
  backchannelLogoutUriProblem,
  logoUriProblem,
  postLogoutRedirectUriProblem,
  redirectUriProblem,
} from '../../src/lib/redirect-uri.js';
import { secretOverlapProblem } from '../../src/modules/clients/client-secret.service.js';
import {
  createClientSchema,
  redirectUriCountProblem,
  updateClientSchema,
} from '../../src/modules/clients/clients.schemas.js';
import { shownProblem } from '../../src/web/client-problems.js';

/*
 * The clients service words its problems in English for the CLI; the console's Russian pages show
 * them in Russian. Each message is produced here by the code that writes it, so that a reworded
 * message is noticed rather than shown in English on a Russian page.
 */
const issues = (result: { success: boolean; error?: { issues: Array<{ message: string }> } }) =>
  result.error?.issues.map((issue) => issue.message) ?? [];

const messages = [
  ...issues(createClientSchema.safeParse({ name: ' ', siteUrl: 'ftp://x', redirectUris: [] })),
  ...issues(
    createClientSchema.safeParse({
      name: 'x'.repeat(101),
      siteUrl: 'https://a.example',
      redirectUris: ['https://a.example/cb'],
    }),
  ),
  ...issues(
    createClientSchema.safeParse({
      name: 'A',
      siteUrl: 'https://a.example',
      redirectUris: Array.from({ length: 21 }, (_, i) => `https://a.example/${i}`),
      postLogoutRedirectUris: Array.from({ length: 21 }, (_, i) => `https://a.example/${i}`),
      idTokenAlg: 'HS256',
    }),
  ),
  ...issues(
    updateClientSchema.safeParse({ addRedirectUris: ['https://a/x'], removeRedirectUris: ['https://a/x'] }),
  ),
  redirectUriProblem('nope', 'https://a.example'),
  redirectUriProblem('https://a.example/#x', 'https://a.example'),
  redirectUriProblem('https://u:p@a.example/', 'https://a.example'),
  redirectUriProblem('javascript:alert(1)', 'https://a.example'),
  redirectUriProblem('http://a.example/cb', 'https://a.example'),
  redirectUriProblem('com.example.app:/cb', 'https://a.example'),
  postLogoutRedirectUriProblem('ftp://a.example/bye'),
  backchannelLogoutUriProblem('http://a.example/logout'),
  logoUriProblem(`https://a.example/${'x'.repeat(2048)}`),
  logoUriProblem('nope'),
  secretOverlapProblem(-1),
  'redirect URI "https://a.example/cb" is not registered for this client',
  redirectUriCountProblem(0, false),
  redirectUriCountProblem(21, true),
  'a client without redirect URIs keeps the device grant: add a redirect URI to take the grant away',
];

describe("the clients service's problems on a Russian page", () => {
  it('are each shown in Russian, an address quoted as typed', () => {
    expect(messages.length).toBeGreaterThan(15);
    for (const message of messages) {
      expect(message, 'a problem').toEqual(expect.any(String));
      const shown = shownProblem(message as string, 'ru');
      expect(shown.lang, message as string).toBe('ru');
      expect(shown.text).toMatch(/[а-яё]/i);
    }
    expect(
      shownProblem(redirectUriProblem('http://a.example/cb', 'https://a.example') as string, 'ru').text,
    ).toBe(
      'Адрес возврата «http://a.example/cb»: нужен https (http — только на 127.0.0.1, [::1] и localhost).',
    );
  });

  it('stay as written on an English page, and an unknown one stays English on a Russian page', () => {
    expect(shownProblem('name must not be empty', 'en')).toEqual({
      text: 'name must not be empty',
      lang: 'en',
    });
    expect(shownProblem('something new went wrong', 'ru')).toEqual({
      text: 'something new went wrong',
      lang: 'en',
    });
  });
});
