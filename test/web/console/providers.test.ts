import { type CryptoKey, exportPKCS8, generateKeyPair } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ClientInputError } from '../../../src/modules/clients/client-input.js';
import { insertLink } from '../../../src/modules/upstream/links.repository.js';
import { parseNewProvider, parseProviderChange } from '../../../src/modules/upstream/provider-settings.js';
import { findProviderByName } from '../../../src/modules/upstream/providers.repository.js';
import {
  addProvider,
  applePrivateKeyOf,
  clientSecretOf,
} from '../../../src/modules/upstream/providers.service.js';
import { providerProblem } from '../../../src/web/console/providers-forms.js';
import { createTestApp, type TestApp } from '../../helpers/app.js';
import { Browser, unescapeHtml } from '../../helpers/browser.js';
import { type ConsoleSession, enterConsole, makeOperator } from '../../helpers/console.js';
import { usingPostgres } from '../../helpers/database.js';
import { depsOf, makeUser } from '../../helpers/factories.js';

/*
 * The console's sign-in providers as an owner drives them through app.inject: the list with the
 * CLI's columns (never a secret), adding each kind, the edit of every setting with secrets
 * write-only (a blank field keeps the stored one), disabling, and removal confirmed by the name
 * with the count of links it ends; refusals by field in English and Russian; a support operator
 * reads but changes nothing.
 */
let t: TestApp;
let owner: ConsoleSession;
let ownerId = 0;
let support: ConsoleSession;
let applePem = '';

beforeAll(async () => {
  t = await createTestApp({ env: { ADMIN_SESSION_TTL_SECONDS: '86400' } });
  const operator = await makeOperator(t, 'owner', { username: 'pia_owner' });
  ownerId = operator.user.id;
  owner = await enterConsole(t, operator);
  support = await enterConsole(t, await makeOperator(t, 'support', { username: 'sam_support' }));
  applePem = await exportPKCS8(
    (await generateKeyPair('ES256', { extractable: true })).privateKey as CryptoKey,
  );
});
afterAll(() => t.close());

const text = (body: string) => unescapeHtml(body.replace(/<[^>]+>/g, ' ')).replace(/\s+/g, ' ');
const stored = async (name: string) => {
  const provider = await findProviderByName(t.database.db, name);
  if (!provider) throw new Error(`no provider ${name}`);
  return provider;
};
const auditOf = (name: string) =>
  t.database.db
    .selectFrom('audit_events')
    .select(['actor', 'action', 'details', 'ip'])
    .where('subject', '=', `provider:${name}`)
    .orderBy('id')
    .execute();
const CALLBACK = (name: string) => `http://localhost:3000/signin/providers/${name}/callback`;

async function link(provider: string): Promise<void> {
  const user = await makeUser(t);
  const { id, issuer } = await stored(provider);
  await insertLink(t.database.db, {
    userId: user.id,
    providerId: id,
    issuer,
    subject: `subject-${user.id}`,
    email: null,
    label: null,
    at: new Date(),
  });
}

const githubForm = {
  name: 'github',
  kind: 'github',
  display_name: '',
  issuer: '',
  api_url: '',
  client_id: 'Iv1.console',
  client_secret: 'gh-console-secret',
  apple_team_id: '',
  apple_key_id: '',
  apple_private_key: '',
  scopes: '',
  enabled: '1',
};

describe(`the console's sign-in providers on ${usingPostgres ? 'PostgreSQL' : 'PGlite'}`, () => {
  it('sends a browser without a session to sign in', async () => {
    const res = await new Browser(t.app).get('/admin/providers');
    expect(res.statusCode).toBe(302);
    expect(res.headers.location).toBe('/signin?return_to=%2Fadmin%2Fproviders');
  });

  it("lists the providers with the CLI's columns and linked accounts, never a secret, from the navigation", async () => {
    const { db, ctx } = depsOf(t);
    await addProvider(
      db,
      ctx,
      { name: 'google', kind: 'google', clientId: 'g.apps', clientSecret: 'google-seed-secret' },
      'operator',
    );
    await link('google');
    const res = await owner.get('/admin/providers');
    expect(res.statusCode).toBe(200);
    expect(res.body).toMatch(/<a href="\/admin\/providers" aria-current="page">Sign-in providers<\/a>/);
    const shown = text(res.body);
    for (const column of [
      'Name',
      'Kind',
      'Button says',
      'Enabled',
      'Trusts its MFA',
      'Linked accounts',
      'Callback URL',
    ])
      expect(shown).toContain(column);
    expect(shown).toContain(`google Google Google yes no 1 ${CALLBACK('google')}`);
    expect(res.body).not.toContain('google-seed-secret');
    expect(res.body).not.toContain((await stored('google')).clientSecretSealed);
    // Every page of the console links to it.
    expect((await owner.get('/admin/clients')).body).toContain('href="/admin/providers"');
  });

  it('adds GitHub, then shows the callback URL to register; the secret sealed and audited as the operator', async () => {
    const res = await owner.post('/admin/providers', githubForm);
    expect(res.statusCode, res.body).toBe(303);
    expect(res.headers.location).toBe('/admin/providers/github?done=added');
    const page = await owner.get('/admin/providers/github?done=added');
    expect(page.statusCode).toBe(200);
    const shown = text(page.body);
    expect(shown).toContain('The provider was added.');
    expect(shown).toContain(`Register this redirect URI at the provider: ${CALLBACK('github')}`);
    expect(shown).toContain('https://api.github.com');
    expect(page.body).not.toContain('gh-console-secret');
    const provider = await stored('github');
    expect(provider).toMatchObject({
      kind: 'github',
      displayName: 'GitHub',
      clientId: 'Iv1.console',
      enabled: true,
    });
    expect(clientSecretOf(depsOf(t).ctx, provider)).toBe('gh-console-secret');
    const events = await auditOf('github');
    // Who did it as every console action records it: the operator's account, username, role, address.
    expect(events).toEqual([
      {
        actor: `operator:${ownerId}`,
        action: 'provider_added',
        ip: '127.0.0.1',
        details: expect.objectContaining({ operator: 'pia_owner', role: 'owner', client_secret: 'changed' }),
      },
    ]);
    expect(JSON.stringify(events)).not.toContain('gh-console-secret');
  });

  it('adds Apple with its key pasted, ignoring the fields of other kinds, and a disabled OpenID provider', async () => {
    const apple = await owner.post('/admin/providers', {
      ...githubForm,
      name: 'apple',
      kind: 'apple',
      client_id: 'com.example.web',
      client_secret: 'ignored-for-apple',
      api_url: 'https://api.example',
      apple_team_id: 'TEAM123456',
      apple_key_id: 'KEY1234567',
      apple_private_key: applePem,
    });
    expect(apple.statusCode, apple.body).toBe(303);
    const provider = await stored('apple');
    expect(provider).toMatchObject({ appleTeamId: 'TEAM123456', apiUrl: null, clientSecretSealed: null });
    expect(applePrivateKeyOf(depsOf(t).ctx, provider)).toBe(applePem.trim());

    const { enabled: _enabled, ...form } = githubForm;
    const oidc = await owner.post('/admin/providers', {
      ...form,
      name: 'corp',
      kind: 'oidc',
      display_name: 'Corp SSO',
      issuer: 'https://sso.corp.example',
      trust_amr: '1',
    });
    expect(oidc.statusCode, oidc.body).toBe(303);
    expect(await stored('corp')).toMatchObject({ displayName: 'Corp SSO', enabled: false, trustAmr: true });
  });

  it('edits every setting, a blank secret or key keeping the stored one, and says when nothing changed', async () => {
    const base = {
      display_name: 'GitHub',
      issuer: 'https://github.com',
      api_url: 'https://api.github.com',
      client_id: 'Iv1.console',
      client_secret: '',
      scopes: 'read:user user:email',
    };
    const same = await owner.post('/admin/providers/github', base);
    expect(same.headers.location).toBe('/admin/providers/github?done=unchanged');
    expect(await auditOf('github')).toHaveLength(1);

    const changed = await owner.post('/admin/providers/github', {
      display_name: 'GitHub Enterprise',
      issuer: 'https://ghe.example',
      api_url: 'https://ghe.example/api/v3',
      client_id: 'Iv1.other',
      client_secret: '',
      scopes: 'read:user',
      trust_amr: '1',
    });
    expect(changed.headers.location).toBe('/admin/providers/github?done=updated');
    const provider = await stored('github');
    expect(provider).toMatchObject({
      displayName: 'GitHub Enterprise',
      issuer: 'https://ghe.example',
      apiUrl: 'https://ghe.example/api/v3',
      clientId: 'Iv1.other',
      scopes: 'read:user',
      trustAmr: true,
      enabled: true,
    });
    expect(clientSecretOf(depsOf(t).ctx, provider)).toBe('gh-console-secret');
    const page = await owner.get('/admin/providers/github');
    expect(page.body).toMatch(/id="clientSecret"[^>]*value=""/);
    expect(page.body).not.toContain('gh-console-secret');

    await owner.post('/admin/providers/github', { ...base, client_secret: 'gh-rotated', trust_amr: '1' });
    expect(clientSecretOf(depsOf(t).ctx, await stored('github'))).toBe('gh-rotated');

    const apple = await owner.post('/admin/providers/apple', {
      display_name: 'Apple',
      issuer: 'https://appleid.apple.com',
      client_id: 'com.example.web',
      apple_team_id: 'TEAM654321',
      apple_key_id: 'KEY1234567',
      apple_private_key: '',
      scopes: 'openid name email',
    });
    expect(apple.headers.location).toBe('/admin/providers/apple?done=updated');
    const stillKeyed = await stored('apple');
    expect(stillKeyed.appleTeamId).toBe('TEAM654321');
    expect(applePrivateKeyOf(depsOf(t).ctx, stillKeyed)).toBe(applePem.trim());
    const events = JSON.stringify(await t.database.db.selectFrom('audit_events').selectAll().execute());
    for (const secret of ['gh-console-secret', 'gh-rotated', 'PRIVATE KEY'])
      expect(events).not.toContain(secret);
  });

  it('disables and enables a provider, its links kept', async () => {
    await link('github');
    const disabled = await owner.post('/admin/providers/github/disable');
    expect(disabled.headers.location).toBe('/admin/providers/github?done=disabled');
    expect((await stored('github')).enabled).toBe(false);
    const page = await owner.get('/admin/providers/github?done=disabled');
    expect(text(page.body)).toContain('The provider is disabled');
    expect(page.body).toContain('action="/admin/providers/github/enable"');
    expect(text((await owner.get('/admin/providers')).body)).toContain('github GitHub GitHub no yes 1');

    expect((await owner.post('/admin/providers/github/enable')).headers.location).toBe(
      '/admin/providers/github?done=enabled',
    );
    expect((await stored('github')).enabled).toBe(true);
    expect(await auditOf('github')).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          action: 'provider_updated',
          details: { operator: 'pia_owner', role: 'owner', enabled: false },
        }),
        expect.objectContaining({
          action: 'provider_updated',
          details: { operator: 'pia_owner', role: 'owner', enabled: true },
        }),
      ]),
    );
  });

  it('removes a provider only with its name typed, naming the links it ends', async () => {
    await link('github');
    const page = await owner.get('/admin/providers/github');
    expect(text(page.body)).toContain('2 accounts lose their link to it');
    // The issuer field says what a new issuer does to those links.
    expect(page.body).toContain('aria-describedby="issuer-hint"');
    expect(text(page.body)).toContain(
      '2 accounts are linked by this issuer: a new one leaves those links behind',
    );
    const russian = text((await owner.get('/admin/providers/github?lang=ru')).body);
    expect(russian).toContain('2 аккаунта потеряют связь с ним');
    expect(russian).toContain('2 аккаунта связаны по этому издателю');
    expect(text((await owner.get('/admin/providers/google?lang=en')).body)).toContain(
      '1 account is linked by this issuer',
    );
    await owner.get('/admin/providers/github?lang=en');

    const wrong = await owner.post('/admin/providers/github/remove', { confirm: 'google' });
    expect(wrong.statusCode).toBe(400);
    expect(wrong.body).toContain('id="confirm-error"');
    expect(text(wrong.body)).toContain("The name typed does not match the provider's name.");
    expect(await findProviderByName(t.database.db, 'github')).toBeDefined();

    const removed = await owner.post('/admin/providers/github/remove', { confirm: 'github' });
    expect(removed.headers.location).toBe('/admin/providers?removed=2');
    expect(await findProviderByName(t.database.db, 'github')).toBeUndefined();
    expect(text((await owner.get('/admin/providers?removed=2')).body)).toContain(
      'The provider was removed; 2 accounts lost their link.',
    );
    expect((await auditOf('github')).at(-1)).toMatchObject({
      actor: `operator:${ownerId}`,
      action: 'provider_removed',
      ip: '127.0.0.1',
      details: { operator: 'pia_owner', links_removed: 2 },
    });
    expect((await owner.get('/admin/providers/github')).statusCode).toBe(404);
  });

  it('refuses a support operator every change, and shows it no forms', async () => {
    const list = await support.get('/admin/providers');
    expect(list.statusCode).toBe(200);
    expect(list.body).not.toContain('action="/admin/providers"');
    expect((await support.get('/admin/providers/google')).body).not.toContain(
      'action="/admin/providers/google',
    );
    for (const path of ['/admin/providers', '/admin/providers/google', '/admin/providers/google/disable'])
      expect((await support.post(path, { ...githubForm, name: 'sneaky' })).statusCode, path).toBe(403);
    expect((await support.post('/admin/providers/google/remove', { confirm: 'google' })).statusCode).toBe(
      403,
    );
    expect(await findProviderByName(t.database.db, 'sneaky')).toBeUndefined();
    expect((await stored('google')).enabled).toBe(true);
  });
});

describe('refused provider settings, by field', () => {
  const problemOf = (body: string, field: string) =>
    unescapeHtml(
      new RegExp(`id="${field}-error">[^<]*<span lang="(\\w+)">([^<]+)</span>`)
        .exec(body)
        ?.slice(1)
        .join('|') ?? '',
    );

  it('shows each problem beside its field in English and Russian, keeps what was typed, never the secret', async () => {
    const bad = {
      ...githubForm,
      name: 'Bad_Name',
      kind: 'oidc',
      issuer: 'http://sso.example',
      client_secret: 'typed-secret',
    };
    const res = await owner.post('/admin/providers', bad);
    expect(res.statusCode).toBe(400);
    expect(problemOf(res.body, 'name')).toBe(
      'en|The name must be 2 to 32 characters: lowercase letters, digits and hyphens, a letter first.',
    );
    expect(problemOf(res.body, 'issuer')).toMatch(/^en\|Must be an https URL/);
    expect(res.body).toMatch(
      /id="issuer"[^>]*aria-describedby="issuer-hint issuer-error"[^>]*aria-invalid="true"/,
    );
    expect(res.body).toContain('value="Bad_Name"');
    expect(res.body).not.toContain('typed-secret');

    await owner.get('/admin/providers?lang=ru');
    const ru = await owner.post('/admin/providers', bad);
    expect(problemOf(ru.body, 'name')).toMatch(/^ru\|Имя — от 2 до 32 символов/);
    expect(problemOf(ru.body, 'issuer')).toMatch(/^ru\|Нужен адрес https/);

    const missing = await owner.post('/admin/providers', { name: 'corp-two', kind: 'oidc', client_id: '' });
    expect(problemOf(missing.body, 'issuer')).toBe('ru|Провайдеру OpenID это поле нужно.');
    expect(problemOf(missing.body, 'displayName')).toBe('ru|Провайдеру OpenID это поле нужно.');
    expect(problemOf(missing.body, 'clientId')).toBe('ru|Заполните это поле.');
    expect(problemOf(missing.body, 'clientSecret')).toBe('ru|Заполните это поле.');
    const taken = await owner.post('/admin/providers', { ...githubForm, name: 'google', kind: 'google' });
    expect(problemOf(taken.body, 'name')).toBe('ru|Провайдер с таким именем уже есть.');
    const edit = await owner.post('/admin/providers/apple', {
      issuer: 'ftp://appleid.apple.com',
      apple_private_key: 'not a key',
    });
    expect(edit.statusCode).toBe(400);
    expect(problemOf(edit.body, 'issuer')).toMatch(/^ru\|Нужен адрес https/);
    await owner.get('/admin/providers?lang=en');

    const key = await owner.post('/admin/providers/apple', { apple_private_key: 'not a key' });
    expect(problemOf(key.body, 'applePrivateKey')).toBe(
      'en|Must be the PKCS#8 PEM of a P-256 key: the .p8 file Apple gives.',
    );
    expect(applePrivateKeyOf(depsOf(t).ctx, await stored('apple'))).toBe(applePem.trim());
    expect(await findProviderByName(t.database.db, 'corp-two')).toBeUndefined();
  });

  it('has every message of the provider settings in Russian (a reworded one is noticed, not shown in English)', async () => {
    const problems: Array<[string, string]> = [];
    const collect = async (parse: Promise<unknown>) => {
      try {
        await parse;
      } catch (error) {
        if (!(error instanceof ClientInputError)) throw error;
        problems.push(...Object.entries(error.fields));
      }
    };
    const long = 'x'.repeat(5000);
    await collect(parseNewProvider({ name: 'B', kind: 'gitlab' }));
    await collect(parseNewProvider({ name: 'ok', kind: 'oidc' }));
    await collect(parseNewProvider({ name: 'ok', kind: 'apple' }));
    await collect(
      parseNewProvider({
        name: 'ok',
        kind: 'oidc',
        displayName: long,
        issuer: `https://a.example/${long}`,
        apiUrl: 'http://a.example',
        clientId: ' ',
        clientSecret: long,
        appleTeamId: 'x',
        appleKeyId: 'y',
        applePrivateKey: long,
        scopes: 'a  "b"',
      }),
    );
    await collect(
      parseNewProvider({
        name: 'ok',
        kind: 'apple',
        clientId: 'x',
        appleTeamId: 'TEAM123456',
        appleKeyId: 'KEY1234567',
        applePrivateKey: 'nope',
      }),
    );
    await collect(parseProviderChange({ name: 'ok', scopes: `${'a '.repeat(300)}a`, displayName: '' }));
    expect(problems.length).toBeGreaterThan(15);
    for (const [field, message] of problems)
      expect(providerProblem(field, message, 'ru'), `${field}: ${message}`).toMatchObject({ lang: 'ru' });
  });
});
