import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { describeOffences, readSources, type SourceFile } from './helpers/architecture.js';
import {
  findOwnershipOffences,
  type Ownership,
  tableReferences,
  tablesOf,
  unusedReadAllowances,
} from './helpers/table-owners.js';

/*
 * Each table owned by one repository (issue 16): only the owner writes it or
 * queries it on its own; another file may only read it in a join listed below, with its reason.
 * The checker is first run on fixtures, so that a clean tree means something.
 */

const OAUTH = 'src/modules/oauth';
const GRANTS = `${OAUTH}/grants.repository.ts`;

const OWNERSHIP: Ownership = {
  owners: {
    users: 'src/modules/accounts/accounts.repository.ts',
    sign_in_attempts: 'src/modules/accounts/accounts.repository.ts',
    browser_sessions: 'src/modules/accounts/sessions.repository.ts',
    audit_events: 'src/modules/audit/audit.repository.ts',
    clients: 'src/modules/clients/clients.repository.ts',
    authorization_requests: `${OAUTH}/authorization-requests.repository.ts`,
    authorization_codes: `${OAUTH}/authorization-codes.repository.ts`,
    consents: `${OAUTH}/consents.repository.ts`,
    grants: GRANTS,
    access_tokens: GRANTS,
    refresh_tokens: GRANTS,
    signing_keys: 'src/modules/oidc/keys.repository.ts',
    premium_periods: 'src/modules/premium/premium.repository.ts',
    wallets: 'src/modules/wallet/wallet.repository.ts',
    wallet_transactions: 'src/modules/wallet/wallet.repository.ts',
    wallet_idempotency_keys: 'src/modules/wallet/wallet.repository.ts',
    mobile_challenges: 'src/modules/mobile/mobile.repository.ts',
    mobile_devices: 'src/modules/mobile/mobile.repository.ts',
    platform_state: 'src/modules/platform/platform.repository.ts',
    incidents: 'src/modules/platform/platform.repository.ts',
    mail_outbox: 'src/modules/mail/outbox.repository.ts',
    mail_recipient_sends: 'src/modules/mail/outbox.repository.ts',
    email_verifications: 'src/modules/accounts/email-verification.repository.ts',
    password_resets: 'src/modules/accounts/password-resets.repository.ts',
    totp_credentials: 'src/modules/mfa/totp.repository.ts',
    recovery_codes: 'src/modules/mfa/recovery-codes.repository.ts',
    pending_sign_ins: 'src/modules/mfa/pending-sign-ins.repository.ts',
    mobile_pending_sign_ins: 'src/modules/mfa/pending-sign-ins.repository.ts',
    second_factor_failures: 'src/modules/accounts/accounts.repository.ts',
    passkeys: 'src/modules/passkeys/passkeys.repository.ts',
    webauthn_challenges: 'src/modules/passkeys/passkeys.repository.ts',
    pushed_authorization_requests: `${OAUTH}/pushed-requests.repository.ts`,
    dpop_proofs: 'src/modules/dpop/dpop-proofs.repository.ts',
    backchannel_logouts: 'src/modules/backchannel/logout-outbox.repository.ts',
    metric_rollups: 'src/modules/rollups/rollups.repository.ts',
    operators: 'src/modules/operators/operators.repository.ts',
    console_sessions: 'src/modules/operators/console-sessions.repository.ts',
    client_owners: 'src/modules/developer-apps/owners.repository.ts',
    client_secrets: 'src/modules/clients/client-secrets.repository.ts',
    registration_tokens: 'src/modules/developer-apps/registration-tokens.repository.ts',
    client_refusals: 'src/modules/client-activity/refusals.repository.ts',
    upstream_providers: 'src/modules/upstream/providers.repository.ts',
    upstream_links: 'src/modules/upstream/links.repository.ts',
    upstream_round_trips: 'src/modules/upstream/trips.repository.ts',
    upstream_pending: 'src/modules/upstream/trips.repository.ts',
    device_codes: 'src/modules/device/device-codes.repository.ts',
    sealing_key_check: 'src/modules/sealing/sealing-key.repository.ts',
  },
  anyTable: {
    'src/modules/housekeeping/purge.repository.ts': 'one generic purge of expired rows, by table name',
    'src/modules/outbox/leased-outbox.repository.ts':
      "the claimed row's writes both outboxes share (lease renewal, delivery, failure), by table name",
  },
  reads: [
    {
      file: 'src/modules/device/device-codes.repository.ts',
      tables: ['users', 'clients', 'consents'],
      why: "a device's request is redeemed in one statement only while its user and client are enabled and its consent stands, as a code is",
    },
    {
      file: 'src/modules/upstream/links.repository.ts',
      tables: ['upstream_providers'],
      why: "an account's links are listed with the name and kind of each link's provider",
    },
    {
      file: 'src/modules/clients/clients.repository.ts',
      tables: ['client_secrets'],
      why: 'client authentication reads a client with the hashes of its valid secrets in one statement (a cache miss at the token endpoint is one round trip)',
    },
    {
      file: 'src/modules/developer-apps/owners.repository.ts',
      tables: ['users', 'clients', 'mail_outbox'],
      why: "an application's owners are listed with their usernames and addresses (and the language of their latest message, to write to them in it), and an account's applications with their settings",
    },
    {
      file: 'src/modules/client-activity/refusals.repository.ts',
      tables: ['clients'],
      why: 'a refused request is written only for an application that exists, found by its client_id in the statement that writes it',
    },
    {
      file: 'src/modules/operators/operators.repository.ts',
      tables: ['users'],
      why: 'an operator is an enabled account: the role is read with the account it belongs to, and listed by username',
    },
    {
      file: 'src/modules/audit/audit-log.repository.ts',
      tables: ['audit_events', 'users', 'clients'],
      why: "the operators' filtered reads of the log, and the usernames and client names its references stand for",
    },
    {
      file: 'src/modules/search/search.repository.ts',
      tables: ['users', 'premium_periods'],
      why: 'one read-only statement per search: enabled users by trigram index, with the premium flag',
    },
    {
      file: 'src/modules/user-admin/user-search.repository.ts',
      tables: ['users'],
      why: "the console's user search: read-only statements over the id, username, e-mail and trigram indexes",
    },
    {
      file: 'src/modules/user-admin/user-detail.repository.ts',
      tables: ['audit_events'],
      why: "the console's user page: the latest events about one account, by the actor and subject indexes",
    },
    {
      file: 'src/modules/accounts/sessions.repository.ts',
      tables: ['users'],
      why: 'the session lookup of every page refuses a disabled user in the same statement',
    },
    {
      file: `${OAUTH}/consents.repository.ts`,
      tables: ['clients'],
      why: "the account page's list of allowed apps, with each client's name and site",
    },
    {
      file: `${OAUTH}/authorization-codes.repository.ts`,
      tables: ['users', 'clients', 'consents'],
      why: 'a code is redeemed in one statement only while its user, client and consent still stand',
    },
    {
      file: GRANTS,
      tables: ['users', 'clients', 'mobile_devices'],
      why: 'rotation and the token lookups check user, client and phone in the statement that finds the token',
    },
    {
      file: `${OAUTH}/refresh-rotation.repository.ts`,
      tables: ['grants', 'users', 'mobile_devices'],
      why: 'rotation checks grant, user and phone in the statement that uses the refresh token up',
    },
    {
      file: `${OAUTH}/registration/registration.repository.ts`,
      tables: ['clients'],
      why: "RFC 7592 management reads the hash of a registered client's registration access token, which nothing else reads",
    },
    {
      file: 'src/modules/backchannel/logout-outbox.repository.ts',
      tables: ['grants', 'clients'],
      why: "the logouts of ended sessions are queued from their grants in one statement, and a claim reads each client's current URI",
    },
  ],
  writes: [
    {
      file: `${OAUTH}/authorization-codes.repository.ts`,
      tables: ['grants', 'access_tokens', 'refresh_tokens'],
      why: 'a code is used up and its grant and tokens made in one statement: single use (RFC 6749 section 4.1.2) without a transaction of several round trips on the token endpoint',
    },
    {
      file: `${OAUTH}/refresh-rotation.repository.ts`,
      tables: ['refresh_tokens', 'access_tokens'],
      why: 'a refresh token is used up and the new pair made in one statement (RFC 6749 section 6, RFC 9700 section 4.14.2)',
    },
  ],
};

const file = (path: string, ...lines: string[]): SourceFile => ({ path, text: `${lines.join('\n')}\n` });

const schema = file(
  'src/db/schema.ts',
  'export interface Database {',
  '  users: UsersTable;',
  '  grants: GrantsTable;',
  '  // a comment: ignored',
  '  access_tokens: AccessTokensTable;',
  '  webauthn_credentials: CredentialsTable;',
  '}',
);

const rules: Ownership = {
  owners: {
    users: 'src/a/users.repository.ts',
    grants: 'src/b/grants.repository.ts',
    access_tokens: 'src/b/grants.repository.ts',
    gone: 'src/c/gone.repository.ts',
  },
  anyTable: { 'src/d/purge.repository.ts': 'a generic purge' },
  reads: [
    { file: 'src/c/bearer.repository.ts', tables: ['access_tokens', 'users'], why: 'one statement' },
    { file: 'src/c/old.repository.ts', tables: ['grants'], why: 'gone since' },
  ],
  writes: [{ file: 'src/c/redeem.repository.ts', tables: ['grants'], why: 'one statement' }],
};

describe('the ownership checker, on fixtures', () => {
  it('reads the tables of interface Database', () => {
    expect(tablesOf(schema)).toEqual([
      { table: 'users', line: 2 },
      { table: 'grants', line: 3 },
      { table: 'access_tokens', line: 5 },
      { table: 'webauthn_credentials', line: 6 },
    ]);
  });

  it('finds tables in query building and in raw sql templates, read or written', () => {
    const refs = tableReferences(
      file(
        'src/x.repository.ts',
        "db.selectFrom('users as u').innerJoin('grants as g', 'g.id', 'u.id').leftJoin('nope', 'a', 'b');",
        "db.selectFrom(['grants', 'users as v']); db.insertInto('access_tokens'); db.deleteFrom('users');",
        "db.updateTable('grants').from('users'); Buffer.from('abc', 'hex');",
        'await sql<{ a: Map<string, number> }>`',
        '  with code as (update grants g set x = 1 from users u returning g.*)',
        '  insert into access_tokens (a) select a from code, g, users u',
        // biome-ignore lint/suspicious/noTemplateCurlyInString: the fixture is the text of a template
        "  -- from grants: an SQL comment; ${sql.table('x')} and ${sql`delete from users`}",
        '  where a is not null for update skip locked',
        '`;',
        "// db.selectFrom('grants') in a comment",
        "const s = 'select * from grants';",
      ),
      new Set(['users', 'grants', 'access_tokens']),
    );
    expect(refs.map((r) => `${r.line} ${r.write ? 'w' : 'r'} ${r.table} ${r.via}`)).toEqual([
      "1 r users selectFrom('users as u')",
      "1 r grants innerJoin('grants as g')",
      "2 r grants selectFrom('grants')",
      "2 r users selectFrom('users as v')",
      "2 w access_tokens insertInto('access_tokens')",
      "2 w users deleteFrom('users')",
      "3 w grants updateTable('grants')",
      "3 r users from('users')",
      '5 w grants sql: update grants',
      '5 r users sql: from users',
      '6 w access_tokens sql: into access_tokens',
      '6 r users sql: from users',
      '7 w users sql: delete from users',
    ]);
  });

  it('reports writes outside the owner, reads outside the owner not allowed, and tables without owner', () => {
    const files = [
      // A repository with no service in between, ending another module's grants itself.
      file(
        'src/c/devices.repository.ts',
        "db.updateTable('grants').set({ revoked_at: at });",
        'sql`update access_tokens set x = 1`;',
      ),
      file(
        'src/c/bearer.repository.ts',
        "db.selectFrom('access_tokens as t').innerJoin('users as u', 'u.id', 't.user_id');",
        "db.updateTable('users');",
      ),
      file('src/web/page.routes.ts', "db.selectFrom('users').selectAll();"),
      file(
        'src/b/grants.repository.ts',
        "db.selectFrom('grants').innerJoin('users', 'users.id', 'grants.user_id');",
      ),
      file('src/a/users.repository.ts', "db.insertInto('users'); db.selectFrom('webauthn_credentials');"),
      file('src/d/purge.repository.ts', 'sql`delete from grants`; sql`delete from users`;'),
      // Its one allowed write passes; a write of another table does not.
      file(
        'src/c/redeem.repository.ts',
        'sql`insert into grants (id) values (1)`;',
        "db.insertInto('users');",
      ),
      file('src/db/migrate.ts', 'sql`insert into users (id) values (1)`;'),
    ];
    expect(describeOffences(findOwnershipOffences(schema, files, rules))).toEqual([
      "src/a/users.repository.ts:1 reads webauthn_credentials (no owner): selectFrom('webauthn_credentials')",
      "src/b/grants.repository.ts:1 reads users (owned by src/a/users.repository.ts): innerJoin('users')",
      "src/c/bearer.repository.ts:2 writes users (owned by src/a/users.repository.ts): updateTable('users')",
      "src/c/devices.repository.ts:1 writes grants (owned by src/b/grants.repository.ts): updateTable('grants')",
      'src/c/devices.repository.ts:2 writes access_tokens (owned by src/b/grants.repository.ts): sql: update access_tokens',
      "src/c/redeem.repository.ts:2 writes users (owned by src/a/users.repository.ts): insertInto('users')",
      'src/db/schema.ts:0 the owner map names gone, not a table',
      'src/db/schema.ts:6 webauthn_credentials has no owner',
      "src/web/page.routes.ts:1 reads users (owned by src/a/users.repository.ts): selectFrom('users')",
    ]);
    expect(unusedReadAllowances(schema, files, rules)).toEqual(['src/c/old.repository.ts grants']);
  });
});

describe('src/', () => {
  const sources = readSources(fileURLToPath(new URL('..', import.meta.url)));
  const realSchema = sources.find((s) => s.path === 'src/db/schema.ts');

  it('has an owner for each table, written only by it and read elsewhere only in the joins allowed', () => {
    if (!realSchema) throw new Error('src/db/schema.ts is missing');
    expect(describeOffences(findOwnershipOffences(realSchema, sources, OWNERSHIP))).toEqual([]);
  });

  it('still makes every read the list allows (a join gone from the code leaves the list)', () => {
    if (!realSchema) throw new Error('src/db/schema.ts is missing');
    expect(unusedReadAllowances(realSchema, sources, OWNERSHIP)).toEqual([]);
  });
});
