/**
 * The groups of the API reference: each operation of the OpenAPI document carries the tag of its
 * path, and the document lists the tags in this order with their descriptions, so the reference
 * (`/api/v1/docs`) and docs/api.md show the API feature by feature.
 */
export interface OpenApiTag {
  name: string;
  description: string;
}

export const OPENAPI_TAGS = [
  {
    name: 'OAuth and OpenID Connect',
    description:
      'Sign-in for third-party sites: the authorization code flow (RFC 6749 §4.1) with PKCE (RFC 7636), the token endpoint, userinfo, revocation (RFC 7009), introspection (RFC 7662), pushed authorization requests (RFC 9126), discovery, the signing keys and RP-initiated logout. The rules: docs/oauth.md.',
  },
  {
    name: 'Profiles',
    description:
      'The signed-in user as a site sees them: `/me` carries the user object and every userinfo field the token was granted.',
  },
  {
    name: 'Search',
    description: 'The public user search: no token, the public fields of each match only.',
  },
  {
    name: 'Premium',
    description: "The premium status of the token's owner (always their own).",
  },
  {
    name: 'Wallet',
    description:
      'The coin wallet, for clients holding the wallet right with a token granted the `wallet` scope: balance, idempotent charges and the history. The rules: docs/wallet.md.',
  },
  {
    name: 'Platform',
    description:
      'The public status of the service (operational, degraded, maintenance) with its open incidents, and the health checks of the process.',
  },
  {
    name: 'Mobile',
    description:
      'Sign-in of the official mobile app with a device key (Ed25519 signatures over a challenge); other clients are refused. The rules: docs/mobile.md.',
  },
  {
    name: 'Catalogue',
    description: 'Every route of the service with who may call it, built from the registered routes.',
  },
  {
    name: 'Pages',
    description:
      'The HTML pages people use in a browser: sign-up, sign-in, the second factor, the account and its security. Their forms carry a CSRF token. The rules: docs/pages.md.',
  },
  {
    name: 'Assets',
    description: "The pages' stylesheet and scripts, and the default avatar, served from this origin.",
  },
] as const satisfies readonly OpenApiTag[];

export type OpenApiTagName = (typeof OPENAPI_TAGS)[number]['name'];

/** Path prefixes and the group their routes belong to; the first match wins. */
const GROUPS: ReadonlyArray<readonly [RegExp, OpenApiTagName]> = [
  [/^\/api\/v1\/oauth\//, 'OAuth and OpenID Connect'],
  [/^\/\.well-known\//, 'OAuth and OpenID Connect'],
  [/^\/api\/v1\/me$/, 'Profiles'],
  [/^\/api\/users\/search$/, 'Search'],
  [/^\/api\/v1\/premium\//, 'Premium'],
  [/^\/api\/v1\/wallet\//, 'Wallet'],
  [/^\/api\/v1\/platform\//, 'Platform'],
  [/^\/health\//, 'Platform'],
  [/^\/metrics$/, 'Platform'],
  [/^\/api\/v1\/mobile\//, 'Mobile'],
  [/^\/api\/v1\/(index\.php|openapi\.json|docs(\/.*)?)?$/, 'Catalogue'],
  [/^\/(assets|static)\//, 'Assets'],
];

/**
 * The group of a route, by its path. Any other path is a page or an asset of the pages (the API
 * lives under /api/, and test/http/openapi.test.ts checks that no API route falls through here).
 */
export function tagOf(url: string): OpenApiTagName {
  for (const [pattern, tag] of GROUPS) if (pattern.test(url)) return tag;
  return 'Pages';
}
