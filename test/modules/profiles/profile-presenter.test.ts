import type { Selectable } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { UsersTable } from '../../../src/db/schema.js';
import { fixedClock } from '../../../src/lib/clock.js';
import { findUserByUsername } from '../../../src/modules/accounts/accounts.repository.js';
import {
  createUser,
  disableUser,
  enableUser,
  updateUserProfile,
} from '../../../src/modules/accounts/accounts.service.js';
import { legacyUserFields } from '../../../src/modules/accounts/legacy-user-fields.js';
import { ALL_SCOPES } from '../../../src/modules/oauth/scopes.js';
import {
  presentMe,
  presentSearchResult,
  presentUserinfo,
} from '../../../src/modules/profiles/profile.presenter.js';
import {
  avatarUrlSchema,
  gameUrlSchema,
  searchResultSchema,
  updateProfileSchema,
  userinfoSchema,
} from '../../../src/modules/profiles/profiles.schemas.js';
import { testConfig } from '../../helpers/app.js';
import { createTestDatabase, type TestDatabase } from '../../helpers/database.js';

type UserRow = Selectable<UsersTable>;

const PUBLIC_URL = 'https://id.example';

function userRow(overrides: Partial<UserRow> = {}): UserRow {
  return {
    id: 7,
    username: 'plain',
    username_skeleton: 'plain',
    password_hash: '$argon2id$not-a-real-hash',
    email: null,
    email_verified: false,
    display_name: null,
    verification_level: 0,
    avatar_url: null,
    game_name: null,
    game_url: null,
    tag_label: null,
    tag_kind: null,
    tag_slug: null,
    disabled_at: null,
    created_at: new Date('2026-01-01T00:00:00Z'),
    updated_at: new Date('2026-01-01T00:00:00Z'),
    ...overrides,
  };
}

/** Level 0: nothing but a username. */
const plain = userRow();
/** Level 1: an avatar path served by the service, an unconfirmed e-mail. */
const standard = userRow({
  id: 8,
  username: 'Standard_1',
  verification_level: 1,
  avatar_url: '/avatars/standard.png',
  email: 'standard@example.com',
  email_verified: false,
});
/** Level 2: everything, with an absolute avatar URL and a confirmed e-mail. */
const special = userRow({
  id: 9,
  username: 'special',
  display_name: 'Spécial Person',
  verification_level: 2,
  avatar_url: 'https://cdn.example/a/special.png',
  email: 'special@example.com',
  email_verified: true,
  game_name: 'SpecialGamer',
  game_url: 'https://game.example/u/special',
  tag_label: 'Staff',
  tag_kind: 'team',
  tag_slug: 'staff',
});

const SCOPE_SETS: Record<string, string[]> = {
  none: [],
  'openid only': ['openid'],
  'profile only': ['profile'],
  'email only': ['email'],
  'verified only': ['verified'],
  all: ['openid', 'profile', 'email', 'verified', 'wallet', 'offline_access'],
};

describe('presentUserinfo', () => {
  it.each([[[]], [['openid']], [['openid', 'wallet', 'offline_access']], [['unknown_scope']]])(
    'with scopes %j returns only sub and id',
    (scopes) => {
      for (const user of [plain, standard, special]) {
        expect(presentUserinfo(user, scopes, PUBLIC_URL)).toStrictEqual({
          sub: String(user.id),
          id: user.id,
        });
      }
    },
  );

  it('profile: the name fields, avatar, game and tag of a full profile (level 2)', () => {
    expect(presentUserinfo(special, ['profile'], PUBLIC_URL)).toStrictEqual({
      sub: '9',
      id: 9,
      name: 'Spécial Person',
      nickname: 'Spécial Person',
      preferred_username: 'special',
      username: 'special',
      display_name: 'Spécial Person',
      picture: 'https://cdn.example/a/special.png',
      avatar_url: 'https://cdn.example/a/special.png',
      game: 'https://game.example/u/special',
      game_name: 'SpecialGamer',
      game_linked: true,
      tag: { label: 'Staff', kind: 'team', slug: 'staff' },
    });
  });

  it('profile: no display name is absent (name shows the username); no avatar is ""; no game is false; no tag is absent', () => {
    expect(presentUserinfo(plain, ['profile'], PUBLIC_URL)).toStrictEqual({
      sub: '7',
      id: 7,
      name: 'plain',
      nickname: 'plain',
      preferred_username: 'plain',
      username: 'plain',
      picture: '',
      avatar_url: '',
      game: false,
      game_linked: false,
    });
  });

  it('profile: an avatar path is made absolute with PUBLIC_URL (keeping its path prefix)', () => {
    expect(presentUserinfo(standard, ['profile'], PUBLIC_URL)).toMatchObject({
      name: 'Standard_1',
      preferred_username: 'Standard_1',
      picture: 'https://id.example/avatars/standard.png',
      avatar_url: 'https://id.example/avatars/standard.png',
    });
    expect(presentUserinfo(standard, ['profile'], 'https://example.com/idp/')).toMatchObject({
      picture: 'https://example.com/idp/avatars/standard.png',
    });
  });

  it('profile: a game link without a stored name shows the link and omits game_name', () => {
    const payload = presentUserinfo(userRow({ game_url: 'http://game.example/x' }), ['profile'], PUBLIC_URL);
    expect(payload).toMatchObject({ game: 'http://game.example/x', game_linked: true });
    expect(payload).not.toHaveProperty('game_name');
  });

  it('email: the address and whether it is confirmed; nothing for a user without one', () => {
    expect(presentUserinfo(special, ['email'], PUBLIC_URL)).toStrictEqual({
      sub: '9',
      id: 9,
      email: 'special@example.com',
      email_verified: true,
    });
    expect(presentUserinfo(standard, ['email'], PUBLIC_URL)).toStrictEqual({
      sub: '8',
      id: 8,
      email: 'standard@example.com',
      email_verified: false,
    });
    expect(presentUserinfo(plain, ['email'], PUBLIC_URL)).toStrictEqual({ sub: '7', id: 7 });
  });

  it.each([
    [plain, 0, 'none', false],
    [standard, 1, 'standard', true],
    [special, 2, 'special', true],
  ] as const)('verified: level %#', (user, level, tier, badge) => {
    expect(presentUserinfo(user, ['verified'], PUBLIC_URL)).toStrictEqual({
      sub: String(user.id),
      id: user.id,
      verified: level,
      verification_level: level,
      verification_tier: tier,
      verified_badge: badge,
    });
  });

  it('all scopes: every field of the full profile, in SPEC order', () => {
    const payload = presentUserinfo(special, ALL_SCOPES, PUBLIC_URL);
    expect(Object.keys(payload)).toEqual([
      'sub',
      'id',
      'name',
      'nickname',
      'preferred_username',
      'username',
      'display_name',
      'picture',
      'avatar_url',
      'game',
      'game_name',
      'game_linked',
      'tag',
      'email',
      'email_verified',
      'verified',
      'verification_level',
      'verification_tier',
      'verified_badge',
    ]);
    expect(payload).toMatchObject({ email: 'special@example.com', verified: 2, verified_badge: true });
  });

  it('all scopes: a bare user lacks only display_name, game_name, tag, email and email_verified', () => {
    const payload = presentUserinfo(plain, ALL_SCOPES, PUBLIC_URL);
    expect(Object.keys(payload).sort()).toEqual(
      [
        'sub',
        'id',
        'name',
        'nickname',
        'preferred_username',
        'username',
        'picture',
        'avatar_url',
        'game',
        'game_linked',
        'verified',
        'verification_level',
        'verification_tier',
        'verified_badge',
      ].sort(),
    );
  });

  it('every field has the type SPEC.md gives it, for every user and scope set', () => {
    for (const [label, scopes] of Object.entries(SCOPE_SETS)) {
      for (const user of [plain, standard, special]) {
        const payload = presentUserinfo(user, scopes, PUBLIC_URL);
        // strict(): no field outside SPEC.md's table, every field of the right type.
        expect(userinfoSchema.strict().safeParse(payload).success, `${label} / ${user.username}`).toBe(true);
        expect(typeof payload.sub).toBe('string');
        expect(typeof payload.id).toBe('number');
        if ('verified' in payload) expect(Number.isInteger(payload.verified)).toBe(true);
        if ('verified_badge' in payload) expect(typeof payload.verified_badge).toBe('boolean');
        if ('game' in payload) expect(payload.game === false || typeof payload.game === 'string').toBe(true);
        if ('game_linked' in payload) expect(typeof payload.game_linked).toBe('boolean');
        if ('email_verified' in payload) expect(typeof payload.email_verified).toBe('boolean');
        if ('tag' in payload)
          expect(Object.keys(payload.tag as object).sort()).toEqual(['kind', 'label', 'slug']);
        if ('picture' in payload && payload.picture !== '')
          expect(String(payload.picture)).toMatch(/^https?:\/\//);
      }
    }
  });
});

describe('presentMe', () => {
  it('is ok, the payload as user, and the payload merged in', () => {
    const payload = presentUserinfo(special, ['profile', 'email'], PUBLIC_URL);
    const me = presentMe(payload);
    expect(me).toStrictEqual({ ok: true, user: payload, ...payload });
    expect(Object.keys(me).slice(0, 2)).toEqual(['ok', 'user']);
  });
});

describe('presentSearchResult', () => {
  it('a full profile', () => {
    expect(presentSearchResult(special, true, PUBLIC_URL)).toStrictEqual({
      id: 9,
      username: 'special',
      display_name: 'Spécial Person',
      avatar_url: 'https://cdn.example/a/special.png',
      premium: true,
      verification_tier: 'special',
      verified: true,
      url: '/special',
    });
  });

  it('no display name shows the username, no avatar the default avatar; a path is made absolute', () => {
    expect(presentSearchResult(plain, false, PUBLIC_URL)).toStrictEqual({
      id: 7,
      username: 'plain',
      display_name: 'plain',
      avatar_url: 'https://id.example/static/default-avatar.png',
      premium: false,
      verification_tier: 'none',
      verified: false,
      url: '/plain',
    });
    expect(presentSearchResult(standard, false, PUBLIC_URL)).toMatchObject({
      avatar_url: 'https://id.example/avatars/standard.png',
      verification_tier: 'standard',
      verified: true,
      url: '/Standard_1',
    });
  });

  it('has exactly the fields and types of SPEC.md', () => {
    for (const user of [plain, standard, special]) {
      expect(
        searchResultSchema.strict().safeParse(presentSearchResult(user, false, PUBLIC_URL)).success,
      ).toBe(true);
    }
  });
});

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
    expect(presentUserinfo(legacyUserFields(updated), ALL_SCOPES, PUBLIC_URL)).toMatchObject({
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
    const payload = presentUserinfo(legacyUserFields(updated), ['profile'], PUBLIC_URL);
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
