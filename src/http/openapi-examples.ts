/**
 * Example answers of the API's routes, shown by the reference (/api/v1/docs, docs/api.md) beside
 * each response's fields. test/http/openapi-examples.test.ts checks each one against its route's
 * response schema, so an example cannot drift from what the route returns.
 */

const USERINFO = {
  sub: '42',
  id: 42,
  name: 'Alice Liddell',
  nickname: 'Alice Liddell',
  preferred_username: 'alice',
  username: 'alice',
  display_name: 'Alice Liddell',
  picture: 'https://id.example.com/avatars/alice.png',
  avatar_url: 'https://id.example.com/avatars/alice.png',
  game: 'https://game.example.com/players/alice',
  game_name: 'alice_in_chains',
  game_linked: true,
  tag: { label: 'Moderator', kind: 'staff', slug: 'moderator' },
  email: 'alice@example.com',
  email_verified: true,
  verified: 1,
  verification_level: 1,
  verification_tier: 'standard',
  verified_badge: true,
};

const CHARGE = {
  id: 'tx_Hq3Zr8Kc1Vw6Nb4Tx9Lm2P',
  type: 'charge',
  amount: 2.5,
  currency: 'COIN',
  description: 'Sword of the North',
  status: 'completed',
  balance_after: 10,
  idempotency_key: 'order-1234',
  created_at: '2026-06-01T12:00:00.000Z',
};

const MOBILE_SESSION = {
  ok: true,
  access_token: 'at_Qm9B8v2LkR5tW1xZ7cN4pJ3sH6yD0eFgUaIoE9rT2w',
  refresh_token: 'rt_V7nK2pX9cL4mQ8wZ1tR6yB3sJ5hD0fGaUeIoN2kW8q',
  token_type: 'Bearer',
  expires_in: 7776000,
  scope: 'openid profile email verified',
  user: { sub: '42', id: 42, username: 'alice', display_name: 'Alice Liddell' },
};

const CATALOGUE = {
  ok: true,
  version: 'v1',
  routes: [
    {
      method: 'GET',
      path: '/api/v1/platform/status',
      auth: 'public',
      description: 'Platform status: overall state, open incidents, services',
    },
  ],
};

/** By `METHOD path`, then status: the example answer. */
export const RESPONSE_EXAMPLES: Record<string, Record<string, unknown>> = {
  'GET /api/v1/oauth/userinfo': { '200': USERINFO },
  'POST /api/v1/oauth/userinfo': { '200': USERINFO },
  'GET /api/v1/me': { '200': { ok: true, user: USERINFO, ...USERINFO } },
  'GET /api/users/search': {
    '200': {
      ok: true,
      query: 'ali',
      results: [
        {
          id: 42,
          username: 'alice',
          display_name: 'Alice Liddell',
          avatar_url: 'https://id.example.com/avatars/alice.png',
          premium: true,
          verification_tier: 'standard',
          verified: true,
          url: '/alice',
        },
      ],
    },
  },
  'GET /api/v1/premium/status': {
    '200': {
      ok: true,
      active: true,
      expires_at: '2026-07-01 12:00:00',
      billing_period: 'month',
      days_left: 30,
      wallet_balance: 12.5,
    },
  },
  'GET /api/v1/wallet/balance': { '200': { ok: true, balance: 12.5, currency: 'COIN' } },
  'POST /api/v1/wallet/charge': {
    '201': { ok: true, transaction: CHARGE, balance: 10 },
    '200': { ok: true, transaction: CHARGE, balance: 10 },
  },
  'GET /api/v1/wallet/transactions': {
    '200': { ok: true, transactions: [CHARGE], next_cursor: 'dDoxMjM0' },
  },
  'GET /api/v1/platform/status': {
    '200': {
      ok: true,
      status: 'degraded',
      message: 'Sign-in is slow for some users.',
      incidents: [
        {
          id: 7,
          title: 'Slow sign-in',
          message: 'We are looking into it.',
          severity: 'minor',
          status: 'open',
          started_at: '2026-06-01T11:40:00.000Z',
          resolved_at: null,
        },
      ],
      services: [
        { name: 'api', status: 'operational' },
        { name: 'database', status: 'operational' },
      ],
      updated_at: '2026-06-01T11:45:00.000Z',
    },
  },
  'GET /health/live': { '200': { ok: true, status: 'live' } },
  'GET /health/ready': { '200': { ok: true, status: 'ready' } },
  'POST /api/v1/mobile/challenge': {
    '200': { ok: true, challenge: 'n7Qw2Lk9Xv4Rp1Tz8Yc3Hb6Jm5Sd0Fg2Ae7Ui9Ko4Wq', expires_in: 120 },
  },
  'POST /api/v1/mobile/verify': { '200': MOBILE_SESSION },
  'POST /api/v1/mobile/refresh': { '200': MOBILE_SESSION },
  'POST /api/v1/mobile/logout': { '200': { ok: true } },
  'GET /api/v1/': { '200': CATALOGUE },
  'GET /api/v1/index.php': { '200': CATALOGUE },
};

type Operations = Record<string, Record<string, { responses?: Record<string, { content?: object }> }>>;

/** The document with each example set on its route's JSON answer (OpenAPI 3.1 Media Type `example`). */
export function withResponseExamples<T extends { paths?: unknown }>(document: T): T {
  const paths = (document.paths ?? {}) as Operations;
  for (const [key, byStatus] of Object.entries(RESPONSE_EXAMPLES)) {
    const [method = '', path = ''] = key.split(' ');
    const responses = paths[path]?.[method.toLowerCase()]?.responses;
    for (const [status, example] of Object.entries(byStatus)) {
      const media = (responses?.[status]?.content as Record<string, { example?: unknown }> | undefined)?.[
        'application/json'
      ];
      if (media) media.example = example;
    }
  }
  return document;
}
