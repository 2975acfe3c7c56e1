import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixedClock } from '../../../src/lib/clock.js';
import { findUserByUsername } from '../../../src/modules/accounts/accounts.repository.js';
import {
  createUser,
  disableUser,
  enableUser,
  updateUserProfile,
} from '../../../src/modules/accounts/accounts.service.js';

import { ALL_SCOPES } from '../../../src/modules/oauth/scopes.js';
import { presentUserinfo } from '../../../src/modules/profiles/profile.presenter.js';
import {
  avatarUrlSchema,
  gameUrlSchema,
  updateProfileSchema,
} from '../../../src/modules/profiles/profiles.schemas.js';
import { testConfig } from '../../helpers/app.js';
import { createTestDatabase, type TestDatabase } from '../../helpers/database.js';

const PUBLIC_URL = 'https://id.example';

/*
 * The rules of profile fields (avatar and game URLs, the update schema) and profile updates through
 * the accounts service, as the presenter then shows them.
 */

describe('profile field rules', () => {
  it.each([
    'https://cdn.example/a.png',
    'http://127.0.0.1:8080/a.png',
    'http://localhost/a.png',
    '/avatars/a.png',
  ])('accepts the avatar %s', (value) => {
    expect(avatarUrlSchema.safeParse(value).success).toBe(true);
  });

  it.each([
    'http://cdn.example/a.png',
    '//evil.example/a.png',
    '/\\evil.example/a.png',
    'avatars/a.png',
    'javascript:alert(1)',
    'https://user:pw@cdn.example/a.png',
    '/a b.png',
    `https://cdn.example/${'a'.repeat(2048)}`,
  ])('refuses the avatar %j', (value) => {
    expect(avatarUrlSchema.safeParse(value).success).toBe(false);
  });

  it('game URLs are absolute http(s)', () => {
    expect(gameUrlSchema.safeParse('http://game.example/u/1').success).toBe(true);
    expect(gameUrlSchema.safeParse('https://game.example/u/1').success).toBe(true);
    for (const bad of ['/u/1', 'ftp://game.example/', 'game.example/u/1'])
      expect(gameUrlSchema.safeParse(bad).success).toBe(false);
  });

  it('game parts go together, tag parts go together, and clearing excludes setting', () => {
    const ok = (input: object) => updateProfileSchema.safeParse(input).success;
    expect(ok({ gameName: 'G', gameUrl: 'https://g.example' })).toBe(true);
    expect(ok({ gameName: 'G' })).toBe(false);
    expect(ok({ clearGame: true, gameUrl: 'https://g.example' })).toBe(false);
    expect(ok({ gameName: 'g'.repeat(65), gameUrl: 'https://g.example' })).toBe(false);
    expect(ok({ tagLabel: 'Staff', tagKind: 'team', tagSlug: 'staff' })).toBe(true);
    expect(ok({ tagLabel: 'Staff', tagKind: 'team' })).toBe(false);
    expect(ok({ clearTag: true, tagSlug: 'x' })).toBe(false);
    expect(ok({ tagLabel: 'l'.repeat(33), tagKind: 'team', tagSlug: 'staff' })).toBe(false);
    expect(ok({ tagLabel: 'Staff', tagKind: 'Team', tagSlug: 'staff' })).toBe(false);
    expect(ok({ tagLabel: 'Staff', tagKind: 'team', tagSlug: 's'.repeat(65) })).toBe(false);
    expect(ok({ tagLabel: 'Staff', tagKind: 'k'.repeat(33), tagSlug: 'staff' })).toBe(false);
  });

  it('a blank display name or avatar removes it; a verification level must be a digit 0–2', () => {
    expect(updateProfileSchema.parse({ displayName: '  ', avatarUrl: '' })).toMatchObject({
      displayName: null,
      avatarUrl: null,
    });
    expect(updateProfileSchema.parse({ verificationLevel: '2' }).verificationLevel).toBe(2);
    expect(updateProfileSchema.parse({ verificationLevel: 1 }).verificationLevel).toBe(1);
    for (const bad of ['', ' ', '3', '1.5', 'one', -1, 3, 1.5])
      expect(updateProfileSchema.safeParse({ verificationLevel: bad }).success, String(bad)).toBe(false);
  });
});

describe('profile updates through the database', () => {
  let database: TestDatabase;
  const clock = fixedClock('2026-05-01T00:00:00Z');
  const ctx = { config: testConfig(), clock };

  beforeAll(async () => {
    database = await createTestDatabase();
    await createUser(database.db, ctx, { username: 'Dora', password: 'long enough password' });
  });
  afterAll(() => database.drop());

  const row = async (username = 'dora') => {
    const found = await findUserByUsername(database.db, username);
    if (!found) throw new Error(`no user ${username}`);
    return found;
  };

  it('changes every field, finds the user case-insensitively, and stamps updated_at from the clock', async () => {
    clock.set('2026-05-02T10:00:00Z');
    const updated = await updateUserProfile(database.db, ctx, {
      username: 'DORA',
      displayName: ' Dora  the Explorer ',
      avatarUrl: '/avatars/dora.png',
      verificationLevel: '1',
      email: 'dora@example.com',
      emailVerified: true,
      gameName: 'DoraPlays',
      gameUrl: 'https://game.example/u/dora',
      tagLabel: 'Explorer',
      tagKind: 'badge',
      tagSlug: 'explorer',
    });
    expect(updated).toMatchObject({
      username: 'Dora',
      displayName: 'Dora the Explorer',
      avatarUrl: '/avatars/dora.png',
      verificationLevel: 1,
      email: 'dora@example.com',
      emailVerified: true,
      gameName: 'DoraPlays',
      gameUrl: 'https://game.example/u/dora',
      tagLabel: 'Explorer',
      tagKind: 'badge',
      tagSlug: 'explorer',
    });
    expect(updated.updatedAt.toISOString()).toBe('2026-05-02T10:00:00.000Z');
    expect(await row()).toEqual(updated);
    expect(presentUserinfo(updated, ALL_SCOPES, PUBLIC_URL)).toMatchObject({
      name: 'Dora the Explorer',
      picture: 'https://id.example/avatars/dora.png',
      game: 'https://game.example/u/dora',
      game_name: 'DoraPlays',
      game_linked: true,
      tag: { label: 'Explorer', kind: 'badge', slug: 'explorer' },
      email: 'dora@example.com',
      email_verified: true,
      verified: 1,
      verification_tier: 'standard',
    });
  });

  it('leaves the fields that are not given unchanged', async () => {
    const before = await row();
    const updated = await updateUserProfile(database.db, ctx, { username: 'dora', verificationLevel: 2 });
    expect(updated).toEqual({ ...before, verificationLevel: 2, updatedAt: updated.updatedAt });
  });

  it('a new e-mail is unconfirmed unless confirmed in the same change; the same e-mail keeps its state', async () => {
    await updateUserProfile(database.db, ctx, { username: 'dora', email: 'dora@example.com' });
    expect(await row()).toMatchObject({ email: 'dora@example.com', emailVerified: true });
    await updateUserProfile(database.db, ctx, { username: 'dora', email: 'dora2@example.com' });
    expect(await row()).toMatchObject({ email: 'dora2@example.com', emailVerified: false });
    await updateUserProfile(database.db, ctx, {
      username: 'dora',
      email: 'dora3@example.com',
      emailVerified: true,
    });
    expect(await row()).toMatchObject({ email: 'dora3@example.com', emailVerified: true });
    await updateUserProfile(database.db, ctx, { username: 'dora', emailVerified: false });
    expect(await row()).toMatchObject({ email: 'dora3@example.com', emailVerified: false });
  });

  it('confirming an e-mail needs one', async () => {
    await createUser(database.db, ctx, { username: 'noemail', password: 'long enough password' });
    await expect(
      updateUserProfile(database.db, ctx, { username: 'noemail', emailVerified: true }),
    ).rejects.toMatchObject({ error: 'invalid_request', description: expect.stringMatching(/e-mail/) });
  });

  it('clears the game, the tag, the display name and the avatar', async () => {
    const updated = await updateUserProfile(database.db, ctx, {
      username: 'dora',
      clearGame: true,
      clearTag: true,
      displayName: '',
      avatarUrl: '',
    });
    expect(updated).toMatchObject({
      displayName: null,
      avatarUrl: null,
      gameName: null,
      gameUrl: null,
      tagLabel: null,
      tagKind: null,
      tagSlug: null,
    });
    const payload = presentUserinfo(updated, ['profile'], PUBLIC_URL);
    expect(payload).toMatchObject({ name: 'Dora', picture: '', game: false, game_linked: false });
    expect(payload).not.toHaveProperty('display_name');
    expect(payload).not.toHaveProperty('tag');
    expect(payload).not.toHaveProperty('game_name');
  });

  it('refuses bad input and unknown users, changing nothing', async () => {
    const before = await row();
    const cases: Array<[object, RegExp]> = [
      [{ avatarUrl: 'http://cdn.example/a.png' }, /avatar URL/],
      [{ gameName: 'G' }, /together/],
      [{ clearTag: true, tagLabel: 'x', tagKind: 'k', tagSlug: 's' }, /not both/],
      [{ verificationLevel: 3 }, /0, 1 or 2/],
      [{ email: 'not-an-email' }, /e-mail/],
      [{ displayName: 'a\u202Eb' }, /invisible/],
    ];
    for (const [input, message] of cases) {
      await expect(updateUserProfile(database.db, ctx, { username: 'dora', ...input })).rejects.toMatchObject(
        {
          error: 'invalid_request',
          description: expect.stringMatching(message),
        },
      );
    }
    await expect(
      updateUserProfile(database.db, ctx, { username: 'nobody', displayName: 'X' }),
    ).rejects.toMatchObject({
      error: 'not_found',
      description: 'no user named nobody',
    });
    expect(await row()).toEqual(before);
  });

  it('disable sets disabled_at and ends the browser sessions at once; both commands are idempotent', async () => {
    const dora = await row();
    await database.db
      .insertInto('browser_sessions')
      .values(
        ['h1', 'h2'].map((id_hash) => ({
          id_hash,
          user_id: dora.id,
          auth_time: clock.now(),
          created_at: clock.now(),
          expires_at: new Date(clock.now().getTime() + 3_600_000),
        })),
      )
      .execute();

    clock.set('2026-05-03T00:00:00Z');
    expect(await disableUser(database.db, ctx, { username: 'DORA' })).toEqual({
      id: dora.id,
      username: 'Dora',
      disabled: true,
      disabled_at: '2026-05-03T00:00:00.000Z',
    });
    const sessions = await database.db
      .selectFrom('browser_sessions')
      .select('id_hash')
      .where('user_id', '=', dora.id)
      .execute();
    expect(sessions).toEqual([]);

    clock.set('2026-05-04T00:00:00Z');
    expect(await disableUser(database.db, ctx, { username: 'dora' })).toMatchObject({
      disabled: true,
      disabled_at: '2026-05-03T00:00:00.000Z',
    });
    expect((await row()).disabledAt?.toISOString()).toBe('2026-05-03T00:00:00.000Z');

    const enabled = { id: dora.id, username: 'Dora', disabled: false, disabled_at: null };
    expect(await enableUser(database.db, ctx, { username: 'dora' })).toEqual(enabled);
    expect(await enableUser(database.db, ctx, { username: 'dora' })).toEqual(enabled);
    expect((await row()).disabledAt).toBeNull();

    await expect(disableUser(database.db, ctx, { username: 'nobody' })).rejects.toMatchObject({
      error: 'not_found',
    });
    await expect(enableUser(database.db, ctx, { username: 'nobody' })).rejects.toMatchObject({
      error: 'not_found',
    });
  });
});
