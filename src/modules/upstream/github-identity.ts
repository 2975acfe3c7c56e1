import * as oidc from 'openid-client';
import { z } from 'zod';
import type { UpstreamProvider } from './providers.repository.js';
import { UpstreamFailure, type UpstreamIdentity } from './upstream-identity.js';

/*
 * GitHub signs people in with OAuth 2.0 alone: who they are comes from its REST API. The stable
 * subject is the numeric account id (a login can be renamed and then taken by someone else), and
 * an address counts as verified only as GitHub's /user/emails marks it.
 */

const userSchema = z.object({
  id: z.number().int().positive(),
  login: z.string().min(1).max(100),
  name: z.string().max(300).nullish(),
});
const emailsSchema = z
  .array(z.object({ email: z.string().max(320), primary: z.boolean(), verified: z.boolean() }))
  .max(1000);

async function getJson(config: oidc.Configuration, accessToken: string, url: URL): Promise<unknown> {
  const headers = new Headers({
    accept: 'application/vnd.github+json',
    'x-github-api-version': '2022-11-28',
  });
  const response = await oidc.fetchProtectedResource(config, accessToken, url, 'GET', undefined, headers);
  if (!response.ok)
    throw new UpstreamFailure('invalid_response', `${url.pathname} answered ${response.status}`);
  try {
    return await response.json();
  } catch {
    throw new UpstreamFailure('invalid_response', `${url.pathname} did not answer JSON`);
  }
}

export async function githubIdentity(
  config: oidc.Configuration,
  provider: UpstreamProvider,
  accessToken: string,
): Promise<UpstreamIdentity> {
  const api = (provider.apiUrl ?? 'https://api.github.com').replace(/\/+$/, '');
  const user = userSchema.safeParse(await getJson(config, accessToken, new URL(`${api}/user`)));
  if (!user.success) throw new UpstreamFailure('invalid_response', '/user is not a GitHub user');
  // Without the addresses (scope not granted, API refused) the person signs in with none.
  const listed = await getJson(config, accessToken, new URL(`${api}/user/emails`)).catch(() => undefined);
  const emails = emailsSchema.safeParse(listed);
  const primary = emails.success ? emails.data.find((each) => each.primary) : undefined;
  return {
    issuer: provider.issuer,
    subject: String(user.data.id),
    email: primary?.email ?? null,
    emailVerified: primary?.verified === true,
    label: user.data.login,
    suggestedUsername: user.data.login,
    amr: [],
  };
}
