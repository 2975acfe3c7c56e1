/**
 * What `idp <command> --help` says beyond the usage line: each option and argument explained, and
 * an example. Kept apart from the commands so their definitions stay short; test/cli/help.test.ts
 * fails when a command or one of its options has no text here.
 */
export interface CommandHelp {
  /** Each option (without `--`) and each positional argument (as the usage line names it). */
  explain: Record<string, string>;
  example: string;
}

const USER = { U: 'the username of the account' };

/** The settings of `idp providers add` and `update`. */
const PROVIDER = {
  NAME: 'the name in URLs (/signin/providers/NAME/callback): 2 to 32 of a-z, 0-9 and "-", a letter first',
  'display-name':
    'what the button says after "Continue with" (default Google, GitHub or Apple; oidc needs one)',
  issuer:
    "the OpenID issuer (GitHub: its site): https, http only on loopback; default the kind's own, oidc needs one",
  'api-url': "GitHub only: its REST API's base (default https://api.github.com)",
  'client-id': 'the client id the provider gave this service',
  'client-secret':
    'the client secret inline; it lands in the process list and shell history, so prefer --client-secret-file',
  'client-secret-file':
    'read the client secret from this file ("-": standard input), where idp is typed; stored sealed',
  'apple-team-id': 'Apple only: your 10-character team id',
  'apple-key-id': 'Apple only: the 10-character id of your Sign in with Apple key',
  'apple-private-key-file':
    "Apple only: that key's .p8 file (PKCS#8, P-256), read where idp is typed; stored sealed",
  scopes:
    'the scopes asked for, space-separated (default openid email profile; GitHub read:user user:email; Apple openid name email)',
  'trust-amr': "a provider's amr saying mfa stands in for the account's own second factor",
};
const JSON_NOTE = 'print exactly one JSON object on stdout instead of the listing';

export const COMMAND_HELP: Record<string, CommandHelp> = {
  migrate: { explain: {}, example: 'idp migrate' },
  demo: {
    explain: {
      'site-port':
        "the example site's port on this machine (default 4000): the demo client's site_url and redirect URIs follow it",
    },
    example: 'idp demo --site-port 4100',
  },
  'users create': {
    explain: {
      username:
        'the sign-in name: 3 to 32 letters a-z, digits and "_", not only digits; unique, kept after deletion',
      password:
        'the password (8 to 256 characters, not one of the 10,000 most common); visible in the process list, so prefer --password-stdin',
      'password-stdin': 'read the password from standard input instead of --password',
      email: 'an e-mail address for password resets and notices',
      'email-verified': 'mark the e-mail address as verified (no confirmation link is sent)',
      'display-name': 'the name shown to sites and in search (the username when absent)',
      'verification-level':
        '0 (none), 1 (standard) or 2 (special): the verified badge sites see with the verified scope',
    },
    example:
      'printf "%s" "$PASSWORD" | idp users create --username alice --password-stdin --email alice@example.com',
  },
  'users update': {
    explain: {
      ...USER,
      'display-name': 'a new display name; an empty string clears it',
      'avatar-url': 'an https URL of the avatar image; an empty string clears it',
      'verification-level': '0, 1 or 2 (see users create)',
      email: 'a new e-mail address; unconfirmed unless --email-verified true',
      'email-verified': 'true or false: whether the address counts as confirmed',
      'game-name': 'the name of the linked game account (with --game-url)',
      'game-url': 'the https link of the linked game account (with --game-name)',
      'no-game': 'remove the linked game account',
      'tag-label': "the tag shown on the user's profile (with --tag-kind and --tag-slug)",
      'tag-kind': 'the kind of the tag (with --tag-label and --tag-slug)',
      'tag-slug': 'the slug of the tag (with --tag-label and --tag-kind)',
      'no-tag': 'remove the tag',
    },
    example: 'idp users update alice --display-name "Alice Liddell" --verification-level 1',
  },
  'users disable': { explain: { ...USER }, example: 'idp users disable mallory' },
  'users enable': { explain: { ...USER }, example: 'idp users enable mallory' },
  'users send-reset': {
    explain: { ...USER, lang: 'en (default) or ru: the language of the message' },
    example: 'idp users send-reset alice --lang en',
  },
  'users mfa-reset': { explain: { ...USER }, example: 'idp users mfa-reset alice' },
  'users unlock': { explain: { ...USER }, example: 'idp users unlock alice' },
  'users list': {
    explain: {
      search:
        'a username, display name, e-mail address or id, or the start or a part of one (3 characters or more for a part)',
      limit: 'how many accounts to print, 1 to 1000 (default 50)',
    },
    example: 'idp users list --search alice@example --limit 20',
  },
  'users find': {
    explain: {
      username: 'the exact username (any case)',
      email: 'the exact e-mail address (any case); every account holding it is printed',
      id: 'the account id, as /me and the audit log show it',
    },
    example: 'idp users find --email alice@example.com --json',
  },
  'clients create': {
    explain: {
      name: "the site's name, shown on the consent page",
      'site-url': "the site's address (https), shown on the consent page",
      'redirect-uri':
        'a callback address, compared exactly (https, or http on 127.0.0.1, [::1] or localhost); repeat for up to 20; optional with --device-grant (a device never receives a redirect)',
      'post-logout-redirect-uri':
        'where RP-initiated logout may send the browser back to (exact match); repeatable',
      wallet: 'allow the client to ask for the wallet scope and charge coins',
      'official-mobile':
        "mark the client as the service's own mobile app: the only one the mobile sign-in API serves",
      public: 'a client without a secret (a native app): PKCE always, refresh tokens only bound by DPoP',
      'require-par': 'accept its authorization requests only through the PAR endpoint (RFC 9126)',
      'require-dpop':
        'require a DPoP proof on every token request, so all its tokens are key-bound (RFC 9449)',
      'device-grant':
        'may use the device authorization grant (RFC 8628): consoles, TVs, command-line tools sign in with a code typed on a phone; such a client needs no --redirect-uri',
      'id-token-alg': 'RS256 (default), ES256 or EdDSA: the algorithm its id_tokens are signed with',
      'backchannel-logout-uri':
        "where logout tokens are posted when a user's session ends (https, or http on loopback)",
      'logo-uri':
        'a logo shown on the sign-in and consent pages of its requests (https, or http on loopback for development)',
    },
    example:
      'idp clients create --name "My site" --site-url https://mysite.example --redirect-uri https://mysite.example/callback',
  },
  'clients list': { explain: {}, example: 'idp clients list --json' },
  'registration-tokens create': {
    explain: {
      uses: 'how many applications it registers (1 to 1000; 1 when absent)',
      'expires-in': 'seconds until it stops working (60 to 7776000, 90 days; 604800, 7 days, when absent)',
      owner:
        'the username of the account that owns the applications it registers; without it they have no owner (only operators manage them)',
    },
    example: 'idp registration-tokens create --uses 5 --expires-in 86400 --owner alice --json',
  },
  'clients update': {
    explain: {
      CLIENT_ID: "the client's public id (pk_…)",
      name: 'a new name',
      'site-url': 'a new site address (https, or http on loopback); every kept redirect URI must suit it',
      wallet: 'true or false: the wallet right',
      'official-mobile': "true or false: whether it is the service's own mobile app",
      'require-par': 'true or false: authorization requests only through PAR',
      'require-dpop': 'true or false: a DPoP proof on every token request',
      'device-grant':
        'may use the device authorization grant (RFC 8628): consoles, TVs, command-line tools sign in with a code typed on a phone',
      'no-device-grant':
        'may no longer use the device authorization grant (RFC 8628); refused while the client has no redirect URI',
      disabled:
        'true stops every token of the client at once; false enables it again (its old tokens stay ended)',
      'add-redirect-uri': 'register another callback address; repeatable (removals run first)',
      'remove-redirect-uri':
        'unregister a callback address; repeatable (the last one only from a client with the device grant)',
      'add-post-logout-redirect-uri': 'register another post-logout return address; repeatable',
      'remove-post-logout-redirect-uri': 'unregister a post-logout return address; repeatable',
      'id-token-alg': 'RS256, ES256 or EdDSA: from the next id_token on',
      'backchannel-logout-uri': 'a new back-channel logout URI; an empty string removes it',
      'logo-uri': 'a new logo URI (https, or http on loopback); an empty string removes it',
    },
    example: 'idp clients update pk_1PFYFtfEa0xO3IQz9Vtn9A --add-redirect-uri https://mysite.example/cb2',
  },
  'clients rotate-secret': {
    explain: {
      CLIENT_ID: "the client's public id (pk_…)",
      overlap:
        'seconds the old secret keeps working beside the new one, 0 to 604800 (7 days); default 0: it stops at once',
    },
    example: 'idp clients rotate-secret pk_1PFYFtfEa0xO3IQz9Vtn9A --overlap 86400',
  },
  'status set': {
    explain: {
      'operational|degraded|maintenance': 'the platform status sites and the status endpoint show',
      message: 'a sentence for users about the status',
    },
    example: 'idp status set degraded --message "Sign-in is slow; we are on it."',
  },
  'incidents open': {
    explain: {
      title: 'a short title of the incident',
      message: 'what users should know',
      severity: 'minor (default), major or critical',
    },
    example: 'idp incidents open --title "E-mail delayed" --severity minor',
  },
  'incidents resolve': {
    explain: { ID: "the incident's id, as incidents open printed it" },
    example: 'idp incidents resolve 3',
  },
  'keys rotate': {
    explain: { alg: 'RS256 (default), ES256 or EdDSA: which algorithm gets the new key' },
    example: 'idp keys rotate --alg ES256',
  },
  'keys list': { explain: {}, example: 'idp keys list' },
  'keys retire': {
    explain: { KID: 'the key id, as keys list shows it' },
    example: 'idp keys retire -S3WEkq0yq7bHk1mX2QvTtQ',
  },
  'premium grant': {
    explain: {
      ...USER,
      period: 'month or year: the billing period sites see',
      days: 'how many days of premium to add',
    },
    example: 'idp premium grant alice --period month --days 30',
  },
  'wallet credit': {
    explain: {
      ...USER,
      AMOUNT: 'coins to add, greater than 0, at most 2 decimals',
      description: 'the ledger entry\'s text (default "Top-up")',
    },
    example: 'idp wallet credit alice 100 --description "Welcome bonus"',
  },
  'wallet verify': { explain: {}, example: 'idp wallet verify' },
  'providers add': {
    explain: {
      ...PROVIDER,
      kind: 'oidc (any OpenID provider), github, google or apple',
      disabled: 'add it without its button yet (enable it with providers update NAME --enabled)',
    },
    example:
      'idp providers add google --kind google --client-id 1234.apps.googleusercontent.com --client-secret-file google.secret',
  },
  'providers update': {
    explain: {
      ...PROVIDER,
      enabled: 'show its button and accept sign-ins through it again',
      disabled: 'hide its button and refuse sign-ins through it; its links stay',
      'no-trust-amr': "ask linked accounts for their own second factor whatever the provider's amr says",
    },
    example: 'pass show idp/github | idp providers update github --client-secret-file - --no-trust-amr',
  },
  'providers remove': {
    explain: { NAME: "the provider's name, as providers list shows it" },
    example: 'idp providers remove github',
  },
  'providers list': { explain: {}, example: 'idp providers list --json' },
  'admins grant': {
    explain: {
      ...USER,
      role: 'owner (everything), support (users, sessions, mail; no applications, keys or wallet credits) or auditor (read only)',
    },
    example: 'idp admins grant alice --role owner',
  },
  'admins revoke': { explain: { ...USER }, example: 'idp admins revoke alice' },
  'admins list': { explain: {}, example: 'idp admins list --json' },
  'audit tail': {
    explain: {
      limit: 'how many events, the newest matching ones (printed oldest first): 1 to 1000, default 50',
      user: 'only events by or about this account: its username or id',
      client: 'only events by or about this client: its client_id',
      action: 'only events of this action, such as sign_in_failed or key_rotated',
      since:
        'only events from this time on: an ISO date or time (UTC without a zone) or a duration back from now (15m, 2h, 7d)',
    },
    example: 'idp audit tail --user alice --since 2h --limit 20',
  },
  'mail test': {
    explain: { to: 'the address to send the test message to' },
    example: 'idp mail test --to ops@example.com',
  },
  'mail outbox': {
    explain: {
      failed: 'only the messages given up on',
      limit: 'how many messages, newest first: 1 to 1000, default 20',
    },
    example: 'idp mail outbox --failed',
  },
};

/** What every command takes. */
export const COMMON_OPTIONS: Record<string, string> = { json: JSON_NOTE, help: 'print this help' };
