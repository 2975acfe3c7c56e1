import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findUserByUsername } from '../../src/modules/accounts/accounts.repository.js';
import { MAIL_LIMIT_PER_ADDRESS_PER_HOUR } from '../../src/modules/mail/mail.service.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { Browser, forms, hiddenFieldsOf, unescapeHtml } from '../helpers/browser.js';
import { usingPostgres } from '../helpers/database.js';
import { makeClient, mintCode, type TestClient } from '../helpers/factories.js';
import { exchangeCode } from '../helpers/http.js';

/*
 * One address on several accounts (issue 33, items 9 and 10): sign-ups cannot flood it, a forgot
 * form naming it sends one message listing the accounts that confirmed it, the verification mail
 * and page name the account, and only the first account to confirm it is told to sites as verified.
 */

const PUBLIC_URL = 'https://id.example.test';
const PASSWORD = 'correct horse battery';
let t: TestApp;
let site: TestClient;

beforeAll(async () => {
  t = await createTestApp({ env: { PUBLIC_URL } });
  site = await makeClient(t, { name: 'Site' });
});

afterAll(async () => {
  await t?.close();
});

async function signUp(username: string, email: string): Promise<void> {
  const res = await new Browser(t.app).submit('/signup', '/signup', { username, password: PASSWORD, email });
  expect(res.statusCode).toBe(303);
}

/** The messages queued to `address` (case-insensitive) of `kind`, oldest first. */
const outbox = (address: string, kind: string) =>
  t.database.db
    .selectFrom('mail_outbox')
    .select(['text_body', 'html_body'])
    .where((eb) => eb(eb.fn('lower', ['recipient']), '=', address.toLowerCase()))
    .where('kind', '=', kind)
    .orderBy('id')
    .execute();

/** Opens a verification link and presses its button; answers the confirmation page. */
async function confirm(text: string) {
  const link = /https:\/\/\S+/.exec(text)?.[0] ?? '';
  const browser = new Browser(t.app);
  const page = await browser.get(link.slice(PUBLIC_URL.length));
  expect(page.statusCode).toBe(200);
  const form = forms(page.body).find((each) => each.action === '/email/verify')?.html ?? '';
  return { page, done: await browser.post('/email/verify', hiddenFieldsOf(form)) };
}

async function forgot(login: string): Promise<void> {
  const res = await new Browser(t.app).submit('/password/forgot', '/password/forgot', { login });
  expect(res.statusCode).toBe(200);
  await t.app.afterResponse.idle();
}

/** The email claims a site gets for `username`: from userinfo and from the id_token. */
async function claimsOf(username: string) {
  const user = await findUserByUsername(t.database.db, username);
  const who = { id: user?.id ?? 0, username, password: PASSWORD };
  const res = await exchangeCode(t.app, site, await mintCode(t, site, who, { scopes: ['openid', 'email'] }));
  expect(res.statusCode, res.body).toBe(200);
  const tokens = res.json() as { access_token: string; id_token: string };
  const info = await t.app.inject({
    method: 'GET',
    url: '/api/v1/oauth/userinfo',
    headers: { authorization: `Bearer ${tokens.access_token}` },
  });
  const idToken = decodeJwt(tokens.id_token);
  return {
    userinfo: (info.json() as { email_verified?: boolean }).email_verified,
    idToken: idToken.email_verified,
  };
}

describe(`one address on several accounts, on ${usingPostgres ? 'PostgreSQL' : 'PGlite'}`, () => {
  it('twelve sign-ups with one address send it at most the per-address limit; a forgot naming it then sends nothing for accounts that never confirmed it', async () => {
    for (let i = 0; i < 12; i++)
      await signUp(`flood_${i}`, i % 2 ? 'Target@example.org' : 'target@example.org');
    expect(await outbox('target@example.org', 'email_verification')).toHaveLength(
      MAIL_LIMIT_PER_ADDRESS_PER_HOUR,
    );
    // Every account was still made, its address unconfirmed.
    expect((await findUserByUsername(t.database.db, 'flood_11'))?.emailVerified).toBe(false);

    await forgot('target@example.org');
    await forgot('flood_3');
    expect(await outbox('target@example.org', 'password_reset')).toEqual([]);

    // Once one account confirms it, a forgot naming the address sends one message, for that account alone.
    const [first] = await outbox('target@example.org', 'email_verification');
    expect((await confirm(first?.text_body ?? '')).done.statusCode).toBe(200);
    await forgot('TARGET@example.org');
    const resets = await outbox('target@example.org', 'password_reset');
    expect(resets).toHaveLength(1);
    expect(resets[0]?.text_body).toContain('Hello, flood_0!');
    expect(resets[0]?.text_body).not.toContain('flood_1');
  });

  it('sends a shared confirmed address one message listing its accounts', async () => {
    await signUp('pair_one', 'pair@example.org');
    await signUp('pair_two', 'PAIR@example.org');
    await signUp('pair_lurker', 'pair@example.org');
    const links = await outbox('pair@example.org', 'email_verification');
    expect((await confirm(links[0]?.text_body ?? '')).done.statusCode).toBe(200);
    expect((await confirm(links[1]?.text_body ?? '')).done.statusCode).toBe(200);
    await forgot('pair@example.org');
    const [message, ...more] = await outbox('pair@example.org', 'password_reset');
    expect(more).toEqual([]);
    expect(message?.text_body).toContain('Account pair_one:');
    expect(message?.text_body).toContain('Account pair_two:');
    // The account that never confirmed the shared address is not listed.
    expect(message?.text_body).not.toContain('pair_lurker');
    expect([...(message?.text_body ?? '').matchAll(/https:\/\/\S+/g)]).toHaveLength(2);
  });

  it('names the account in the verification mail and on its page', async () => {
    await signUp('named_one', 'named@example.org');
    const [mail] = await outbox('named@example.org', 'email_verification');
    expect(mail?.text_body).toContain('Confirm that named@example.org belongs to the account named_one');
    expect(unescapeHtml(mail?.html_body ?? '')).toContain(
      'Confirm that named@example.org belongs to the account named_one',
    );
    const { page, done } = await confirm(mail?.text_body ?? '');
    expect(unescapeHtml(page.body)).toContain(
      'Confirm that named@example.org belongs to the account named_one.',
    );
    expect(unescapeHtml(done.body)).toContain(
      'named@example.org is now confirmed for the account named_one.',
    );
  });

  it('tells sites email_verified only for the first account to confirm an address', async () => {
    await signUp('owner_first', 'owned@example.org');
    await signUp('second_comer', 'Owned@Example.org');
    const [ownerLink, secondLink] = await outbox('owned@example.org', 'email_verification');
    expect((await confirm(ownerLink?.text_body ?? '')).done.statusCode).toBe(200);
    const second = await confirm(secondLink?.text_body ?? '');
    expect(second.done.statusCode).toBe(200);
    expect(second.done.body).toContain('Another account confirmed this address first');

    // Both confirmations are kept; only the first is released.
    expect((await findUserByUsername(t.database.db, 'second_comer'))?.emailVerified).toBe(true);
    expect(await claimsOf('owner_first')).toEqual({ userinfo: true, idToken: true });
    expect(await claimsOf('second_comer')).toEqual({ userinfo: false, idToken: false });
    const audit = await t.database.db
      .selectFrom('audit_events')
      .select('details')
      .where('action', '=', 'email_verified')
      .orderBy('id', 'desc')
      .executeTakeFirstOrThrow();
    expect(audit.details).toEqual({ claim_withheld: true });
  });
});
