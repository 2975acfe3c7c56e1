import { describe, expect, it } from 'vitest';
import type { User } from '../../../src/modules/accounts/user.js';
import { ALL_SCOPES } from '../../../src/modules/oauth/scopes.js';
import {
  presentMe,
  presentSearchResult,
  presentUserinfo,
} from '../../../src/modules/profiles/profile.presenter.js';
import { searchResultSchema, userinfoSchema } from '../../../src/modules/profiles/profiles.schemas.js';
import { USERINFO_CLAIMS } from '../../helpers/claims.js';

const PUBLIC_URL = 'https://id.example';

function makeUser(overrides: Partial<User> = {}): User {
  return {
    id: 7,
    username: 'plain',
    email: null,
    emailVerified: false,
    emailClaimWithheld: false,
    displayName: null,
    verificationLevel: 0,
    avatarUrl: null,
    gameName: null,
    gameUrl: null,
    tagLabel: null,
    tagKind: null,
    tagSlug: null,
    disabledAt: null,
    deletedAt: null,
    createdAt: new Date('2026-01-01T00:00:00Z'),
    updatedAt: new Date('2026-01-01T00:00:00Z'),
    ...overrides,
  };
}

/** Level 0: nothing but a username. */
const plain = makeUser();
/** Level 1: an avatar path served by the service, an unconfirmed e-mail. */
const standard = makeUser({
  id: 8,
  username: 'Standard_1',
  verificationLevel: 1,
  avatarUrl: '/avatars/standard.png',
  email: 'standard@example.com',
  emailVerified: false,
});
/** Level 2: everything, with an absolute avatar URL and a confirmed e-mail. */
const special = makeUser({
  id: 9,
  username: 'special',
  displayName: 'Spécial Person',
  verificationLevel: 2,
  avatarUrl: 'https://cdn.example/a/special.png',
  email: 'special@example.com',
  emailVerified: true,
  gameName: 'SpecialGamer',
  gameUrl: 'https://game.example/u/special',
  tagLabel: 'Staff',
  tagKind: 'team',
  tagSlug: 'staff',
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
    const payload = presentUserinfo(makeUser({ gameUrl: 'http://game.example/x' }), ['profile'], PUBLIC_URL);
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
    expect(Object.keys(payload)).toEqual(USERINFO_CLAIMS);
    expect(payload).toMatchObject({ email: 'special@example.com', verified: 2, verified_badge: true });
  });

  it('all scopes: a bare user lacks only display_name, game_name, tag, email and email_verified', () => {
    const payload = presentUserinfo(plain, ALL_SCOPES, PUBLIC_URL);
    const lacking = ['display_name', 'game_name', 'tag', 'email', 'email_verified'];
    expect(Object.keys(payload).sort()).toEqual(
      USERINFO_CLAIMS.filter((claim) => !lacking.includes(claim)).sort(),
    );
  });

  it('every field has the type docs/api.md gives it, for every user and scope set', () => {
    for (const [label, scopes] of Object.entries(SCOPE_SETS)) {
      for (const user of [plain, standard, special]) {
        const payload = presentUserinfo(user, scopes, PUBLIC_URL);
        // strict(): no field outside the API's table, every field of the right type.
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

  it('has exactly the fields and types of docs/api.md', () => {
    for (const user of [plain, standard, special]) {
      expect(
        searchResultSchema.strict().safeParse(presentSearchResult(user, false, PUBLIC_URL)).success,
      ).toBe(true);
    }
  });
});
