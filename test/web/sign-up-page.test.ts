import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deleteAccount } from '../../src/modules/accounts/account-deletion.service.js';
import { findUserByUsername } from '../../src/modules/accounts/accounts.repository.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { attribute, Browser, formWithAction, unescapeHtml } from '../helpers/browser.js';
import { depsOf, makeUser } from '../helpers/factories.js';

/**
 * The sign-up and sign-in forms as rendered (docs/pages.md "Sign-up"): every problem of a
 * sign-up in one answer, the taken username included; what the e-mail field is for; the
 * common-password rule in the password's hint; the sign-in page's focus on the username.
 */
let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
  await makeUser(t, { username: 'taken_name' });
});
afterAll(() => t.close());

const signUp = (fields: Record<string, string>, lang = 'en') =>
  new Browser(t.app).submit(`/signup?lang=${lang}`, '/signup', fields);

/** The text of the field's message (`<p id="<field>-error">`), or undefined. */
function fieldError(res: LightMyRequestResponse, field: string): string | undefined {
  const match = new RegExp(`<p class="field-error" id="${field}-error">([^<]*)</p>`).exec(res.body);
  return match?.[1] === undefined ? undefined : unescapeHtml(match[1]);
}

/** The opening tag of the input `id`. */
function inputTag(html: string, id: string): string {
  const tag = new RegExp(`<input id="${id}"[^>]*>`).exec(html)?.[0];
  if (!tag) throw new Error(`no input #${id}`);
  return tag;
}

describe('sign-up reports every problem in one round', () => {
  it('names a taken username beside a short password and a bad address, creating nobody', async () => {
    const res = await signUp({ username: 'Taken_Name', password: 'short', email: 'not-an-address' });
    expect(res.statusCode).toBe(400);
    expect(fieldError(res, 'username')).toBe('This username is already taken; choose another one.');
    expect(fieldError(res, 'password')).toBe('Password must be at least 8 characters.');
    expect(fieldError(res, 'email')).toBe('Enter a valid e-mail address, or leave the field empty.');
    expect(attribute(inputTag(res.body, 'username'), 'aria-invalid')).toBe('true');
    // The form keeps what was typed, but the password.
    expect(attribute(inputTag(res.body, 'username'), 'value')).toBe('Taken_Name');
  });

  it('names it beside a common password, in Russian too', async () => {
    const res = await signUp({ username: 'taken_name', password: 'password1', email: '' }, 'ru');
    expect(res.statusCode).toBe(400);
    expect(fieldError(res, 'username')).toBe('Это имя уже занято, выберите другое.');
    expect(fieldError(res, 'password')).toMatch(/^Это один из самых распространённых паролей/);
    expect(fieldError(res, 'email')).toBeUndefined();
  });

  it('counts a look-alike of a taken name as taken, as the unique index does (rn for m)', async () => {
    const res = await signUp({ username: 'taken_narne', password: 'short', email: '' });
    expect(fieldError(res, 'username')).toBe('This username is already taken; choose another one.');
  });

  it('counts the name of a deleted account as taken: it stays taken', async () => {
    const gone = await makeUser(t, { username: 'gone_name' });
    await deleteAccount(t.database.db, depsOf(t).ctx, { userId: gone.id, password: gone.password, ip: null });
    const res = await signUp({ username: 'gone_name', password: 'x', email: '' });
    expect(fieldError(res, 'username')).toBe('This username is already taken; choose another one.');
  });

  it('says nothing of a free username, and a valid form still makes the account', async () => {
    const refused = await signUp({ username: 'free_name', password: 'short', email: '' });
    expect(fieldError(refused, 'username')).toBeUndefined();
    expect(fieldError(refused, 'password')).toBeDefined();
    const made = await signUp({ username: 'free_name', password: 'a long enough password', email: '' });
    expect(made.statusCode).toBe(303);
    expect(await findUserByUsername(t.database.db, 'free_name')).toBeDefined();
  });
});

describe('the sign-up fields say what they need', () => {
  it.each([
    ['en', /^It is the only way to recover your password if you forget it/],
    ['ru', /^Это единственный способ восстановить пароль, если вы его забудете/],
  ] as const)('the e-mail field is the only way to recover a password (%s)', async (lang, text) => {
    const page = await new Browser(t.app).get(`/signup?lang=${lang}`);
    const hint = /<p class="hint" id="email-hint">([^<]*)<\/p>/.exec(page.body)?.[1];
    expect(unescapeHtml(hint ?? '')).toMatch(text);
    expect(attribute(inputTag(page.body, 'email'), 'aria-describedby')).toBe('email-hint');
    // With a problem, the field is described by its hint and its message.
    const res = await signUp({ username: 'someone_new', password: 'short', email: 'x@' }, lang);
    expect(attribute(inputTag(res.body, 'email'), 'aria-describedby')).toBe('email-hint email-error');
  });

  it.each([
    [
      'en',
      'At least 8 characters, and not one of the 10,000 most common passwords, which attackers try first.',
    ],
    ['ru', 'Не менее 8 символов и не из 10\u00a0000 самых распространённых паролей — их подбирают первыми.'],
  ] as const)('the password hint states the common-password rule (%s)', async (lang, text) => {
    const page = await new Browser(t.app).get(`/signup?lang=${lang}`);
    const hint = /<p class="hint" id="password-hint">([^<]*)<\/p>/.exec(page.body)?.[1];
    expect(unescapeHtml(hint ?? '')).toBe(text);
    expect(attribute(inputTag(page.body, 'password'), 'aria-describedby')).toBe('password-hint');
  });
});

describe('the sign-in page', () => {
  it('focuses the username field, and only it', async () => {
    for (const url of ['/signin', '/signin?lang=ru&return_to=/account']) {
      const page = await new Browser(t.app).get(url);
      const form = formWithAction(page.body, '/signin');
      expect(inputTag(form, 'username')).toMatch(/\sautofocus[\s>]/);
      expect(form.match(/\sautofocus[\s>]/g)).toHaveLength(1);
    }
  });
});
