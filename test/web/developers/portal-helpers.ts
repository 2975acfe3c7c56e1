import { expect } from 'vitest';
import type { TestApp } from '../../helpers/app.js';
import { Browser, unescapeHtml } from '../../helpers/browser.js';
import { makeUser, type TestUser, type UserOptions } from '../../helpers/factories.js';

/** The page's text without its tags, entities decoded, spaces collapsed. */
export const textOf = (body: string) => unescapeHtml(body.replace(/<[^>]+>/g, ' ')).replace(/\s+/g, ' ');

/** The value of the read-only field a page shows once (views/developers/_copy.ejs). */
export const shownValue = (body: string, id: string) =>
  unescapeHtml(new RegExp(`id="${id}"[^>]*value="([^"]+)"`).exec(body)?.[1] ?? '');

/** A valid creation form, as the page's fields name them. */
export const validApp = {
  name: 'Book Shop',
  site_url: 'https://books.example',
  redirect_uris: 'https://books.example/cb\nhttps://books.example/cb2',
  logo_uri: '',
  post_logout_redirect_uris: '',
  backchannel_logout_uri: '',
  id_token_alg: 'RS256',
  kind: 'confidential',
};

/** A signed-in browser of a new account (e-mail confirmed unless told otherwise). */
export async function signedIn(
  t: TestApp,
  options: UserOptions = {},
): Promise<{ browser: Browser; user: TestUser }> {
  const user = await makeUser(t, options);
  const browser = new Browser(t.app);
  await browser.signIn(user);
  return { browser, user };
}

/** Creates an application through the portal's form; its client_id and the secret shown once. */
export async function createApp(
  browser: Browser,
  fields: Record<string, string> = {},
): Promise<{ clientId: string; secret: string; body: string }> {
  const res = await browser.submit('/developers/apps/new', '/developers/apps', { ...validApp, ...fields });
  expect(res.statusCode, res.body.slice(0, 2000)).toBe(201);
  return {
    clientId: shownValue(res.body, 'client-id'),
    secret: shownValue(res.body, 'client-secret'),
    body: res.body,
  };
}
