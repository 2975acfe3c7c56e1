/**
 * The scenarios compared with the baselines: the ceiling (a bare Fastify route), the service and
 * oidc-provider on userinfo, /me, the code exchange (RS256, and ES256 for the service) and the
 * rotating refresh grant. The values used once (codes, refresh tokens) are seeded beforehand.
 */
import type { Scenario } from './harness.js';
import { basicOf, bearerRequests, dpopRequests, formPosts, mint } from './scenarios.js';
import { CODE_VERIFIER, REDIRECT_URI, type Seeded } from './seed.js';

export interface CompareServers {
  ceiling: { base: string; pid: number | undefined };
  idp: { base: string; pid: number | undefined };
  provider: { base: string; pid: number | undefined };
}

/** Ours: RS256 and ES256 codes and refresh tokens, seeded; oidc-provider's are minted here. */
export async function compareScenarios(
  servers: CompareServers,
  seeded: Seeded,
  ours: { codes: string[]; es256Codes: string[]; refreshTokens: string[] },
  onceNeeded: number,
): Promise<Scenario[]> {
  const { ceiling, idp, provider } = servers;
  console.log('minting oidc-provider tokens…');
  const theirTokens = (await mint(provider.base, 'access_token', seeded.accessTokens.length)).values;
  const theirCodes = await mint(provider.base, 'authorization_code', onceNeeded);
  const theirRefresh = (await mint(provider.base, 'refresh_token', onceNeeded)).values;
  const theirBasic = basicOf('bench', 'bench-secret');
  const basic = basicOf(seeded.client.clientId, seeded.client.clientSecret);
  const redirect = encodeURIComponent(REDIRECT_URI);
  const exchange = (verifier: string | undefined) => (code: string) =>
    `grant_type=authorization_code&code=${code}&redirect_uri=${redirect}&code_verifier=${verifier}`;
  const refresh = (token: string) => `grant_type=refresh_token&refresh_token=${token}`;
  const userinfoUrl = `${idp.base}/api/v1/oauth/userinfo`;
  return [
    {
      name: 'bare Fastify JSON route (ceiling)',
      target: 'ceiling',
      url: `${ceiling.base}/`,
      options: {},
      pid: ceiling.pid,
    },
    {
      name: `userinfo (${seeded.accessTokens.length} distinct tokens)`,
      target: 'idp',
      url: userinfoUrl,
      options: bearerRequests(seeded.accessTokens),
      pid: idp.pid,
    },
    {
      name: `DPoP-bound userinfo (${seeded.dpopTokens.length} distinct tokens, a fresh proof each)`,
      target: 'idp',
      url: userinfoUrl,
      options: dpopRequests(userinfoUrl, seeded.dpopTokens),
      pid: idp.pid,
    },
    {
      name: `userinfo (${theirTokens.length} distinct tokens)`,
      target: 'oidc-provider',
      url: `${provider.base}/me`,
      options: bearerRequests(theirTokens),
      pid: provider.pid,
    },
    {
      name: `/me (${seeded.accessTokens.length} distinct tokens)`,
      target: 'idp',
      url: `${idp.base}/api/v1/me`,
      options: bearerRequests(seeded.accessTokens),
      pid: idp.pid,
    },
    {
      name: 'authorization code exchange (PKCE S256)',
      target: 'idp',
      url: `${idp.base}/api/v1/oauth/token`,
      options: formPosts(basic, ours.codes, exchange(CODE_VERIFIER)),
      pid: idp.pid,
    },
    {
      name: 'ES256 authorization code exchange (PKCE S256, an ES256 client)',
      target: 'idp',
      url: `${idp.base}/api/v1/oauth/token`,
      options: formPosts(
        basicOf(seeded.es256Client.clientId, seeded.es256Client.clientSecret),
        ours.es256Codes,
        exchange(CODE_VERIFIER),
      ),
      pid: idp.pid,
    },
    {
      name: 'authorization code exchange (PKCE S256)',
      target: 'oidc-provider',
      url: `${provider.base}/token`,
      options: formPosts(theirBasic, theirCodes.values, exchange(theirCodes.code_verifier)),
      pid: provider.pid,
    },
    {
      name: 'refresh token grant (rotating)',
      target: 'idp',
      url: `${idp.base}/api/v1/oauth/token`,
      options: formPosts(basic, ours.refreshTokens, refresh),
      pid: idp.pid,
    },
    {
      name: 'refresh token grant (rotating)',
      target: 'oidc-provider',
      url: `${provider.base}/token`,
      options: formPosts(theirBasic, theirRefresh, refresh),
      pid: provider.pid,
    },
  ];
}
