import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateSecret, hashSecret } from '../../src/lib/secrets.js';
import { disableUser } from '../../src/modules/accounts/accounts.service.js';
import { insertPasswordReset } from '../../src/modules/accounts/password-resets.repository.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { Browser, forms, hiddenFieldsOf } from '../helpers/browser.js';
import { depsOf, makeUser, type TestUser } from '../helpers/factories.js';

/*
 * A reset link of an account disabled after it was sent (`idp users disable`): opening it shows the
 * page of a link that does not work, the same answer as an unknown link (a link proves the mailbox,
 * not the password, and "disabled" is said only to someone who knows the password), and no form; a
 * form opened before the account was disabled is refused the same way and sets nothing.
 */

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

/** A live reset link for `user`, as the forgot form stores it (the token's hash only). */
async function resetLink(user: TestUser): Promise<string> {
  const token = generateSecret('passwordReset');
  const now = t.clock.now();
  await insertPasswordReset(t.database.db, {
    tokenHash: hashSecret(token),
    userId: user.id,
    email: `${user.username}@example.com`,
    at: now,
    expiresAt: new Date(now.getTime() + 30 * 60_000),
  });
  return `/password/reset?token=${token}`;
}

const passwordHashOf = async (user: TestUser) =>
  (
    await t.database.db
      .selectFrom('users')
      .select('password_hash')
      .where('id', '=', user.id)
      .executeTakeFirstOrThrow()
  ).password_hash;

/** The page without what differs between two answers: the request id and the link itself. */
const comparable = (body: string) =>
  body.replace(/<code>[0-9a-f-]{36}<\/code>/, '<code>id</code>').replace(/pr_[A-Za-z0-9_-]+/g, 'pr_token');

describe('a reset link of an account disabled after it was sent', () => {
  it('opens the page of a link that does not work, as an unknown link does, with no form', async () => {
    const user = await makeUser(t);
    const link = await resetLink(user);
    const browser = new Browser(t.app);
    const before = await browser.get(link);
    expect(before.statusCode).toBe(200);
    expect(forms(before.body).map((form) => form.action)).toContain('/password/reset');

    await disableUser(t.database.db, depsOf(t).ctx, { username: user.username });
    const after = await browser.get(link);
    const unknown = await browser.get(`/password/reset?token=${generateSecret('passwordReset')}`);
    expect(after.statusCode).toBe(400);
    expect(after.body).toContain('This password reset link does not work');
    expect(forms(after.body).map((form) => form.action)).not.toContain('/password/reset');
    expect(after.body).not.toContain(user.username);
    expect(comparable(after.body)).toBe(comparable(unknown.body));
  });

  it('refuses the form opened before, and the password stays', async () => {
    const user = await makeUser(t);
    const browser = new Browser(t.app);
    const page = await browser.get(await resetLink(user));
    const form = forms(page.body).find((each) => each.action === '/password/reset');
    const hashBefore = await passwordHashOf(user);
    await disableUser(t.database.db, depsOf(t).ctx, { username: user.username });
    const posted = await browser.post('/password/reset', {
      ...hiddenFieldsOf(form?.html ?? ''),
      password: 'a brand new passphrase',
      password_confirm: 'a brand new passphrase',
    });
    expect(posted.statusCode).toBe(400);
    expect(posted.body).toContain('This password reset link does not work');
    expect(await passwordHashOf(user)).toBe(hashBefore);
  });
});
