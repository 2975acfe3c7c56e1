/**
 * Scenarios made of several requests, which autocannon cannot express: the whole browserless
 * sign-in of a third-party site (authorize → consent → token → userinfo) and password sign-ins.
 * Each runs as a closed loop: `concurrency` workers, each starting its next flow when the last one
 * ends, for a fixed time. A flow that fails counts as a failure, not as throughput.
 */
import { createHash, randomBytes } from 'node:crypto';
import { CookieJar } from '../test/helpers/cookie-jar.js';
import { hiddenFields } from '../test/helpers/html.js';

/** The outcome of one timed loop. */
export interface LoopResult {
  completed: number;
  failures: number;
  seconds: number;
  /** Duration of each completed flow, ms. */
  latencies: number[];
  /** The first failure's message, to tell what went wrong. */
  firstFailure?: string;
}

/** Runs `flow` in `concurrency` workers for `seconds`. */
export async function closedLoop(
  seconds: number,
  concurrency: number,
  flow: (worker: number) => Promise<void>,
): Promise<LoopResult> {
  const result: LoopResult = { completed: 0, failures: 0, seconds, latencies: [] };
  const deadline = performance.now() + seconds * 1000;
  await Promise.all(
    Array.from({ length: concurrency }, async (_, worker) => {
      while (performance.now() < deadline) {
        const start = performance.now();
        try {
          await flow(worker);
          result.completed++;
          result.latencies.push(performance.now() - start);
        } catch (error) {
          result.failures++;
          result.firstFailure ??= error instanceof Error ? error.message : String(error);
        }
      }
    }),
  );
  return result;
}

/** A percentile of a list of durations (ms, rounded). */
export function percentile(values: number[], p: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return Math.round(sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] as number);
}

async function expectStatus(response: Response, status: number, what: string): Promise<Response> {
  if (response.status !== status) {
    const body = (await response.text()).slice(0, 200).replace(/\s+/g, ' ');
    throw new Error(`${what}: ${response.status} instead of ${status}: ${body}`);
  }
  return response;
}

/** A browser signed in as one user: GET /signin, then POST its form. */
export async function signIn(baseUrl: string, username: string, password: string): Promise<CookieJar> {
  const jar = new CookieJar();
  const page = await fetch(`${baseUrl}/signin`, { headers: jar.header() });
  jar.keep(await expectStatus(page, 200, 'sign-in page'));
  const fields = hiddenFields(await page.text(), '/signin');
  const answer = await fetch(`${baseUrl}/signin`, {
    method: 'POST',
    redirect: 'manual',
    headers: { ...jar.header(), 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ ...fields, username, password }).toString(),
  });
  jar.keep(await expectStatus(answer, 303, 'sign-in'));
  await answer.arrayBuffer();
  return jar;
}

export interface FlowClient {
  clientId: string;
  clientSecret: string;
  redirectUri: string;
}

/**
 * One whole sign-in of a third-party site for a user already signed in to the service, as a
 * browser and the site's backend do it: the authorize URL (with PKCE, state, nonce and
 * `prompt=consent`, so that the consent page is shown every time), the consent form, the redirect
 * with the code, the code exchange, and userinfo.
 */
export async function authorizeFlow(baseUrl: string, jar: CookieJar, client: FlowClient): Promise<void> {
  const verifier = randomBytes(32).toString('base64url');
  const state = randomBytes(12).toString('base64url');
  const authorize = new URL(`${baseUrl}/api/v1/oauth/authorize`);
  authorize.search = new URLSearchParams({
    response_type: 'code',
    client_id: client.clientId,
    redirect_uri: client.redirectUri,
    scope: 'openid profile email',
    state,
    nonce: randomBytes(12).toString('base64url'),
    prompt: 'consent',
    code_challenge: createHash('sha256').update(verifier).digest('base64url'),
    code_challenge_method: 'S256',
  }).toString();
  const consent = await fetch(authorize, { headers: jar.header(), redirect: 'manual' });
  jar.keep(await expectStatus(consent, 200, 'consent page'));
  const fields = hiddenFields(await consent.text(), '/api/v1/oauth/authorize/decision');
  const decision = await fetch(`${baseUrl}/api/v1/oauth/authorize/decision`, {
    method: 'POST',
    redirect: 'manual',
    headers: { ...jar.header(), 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ ...fields, decision: 'allow', share_email: '1' }).toString(),
  });
  jar.keep(await expectStatus(decision, 303, 'consent decision'));
  await decision.arrayBuffer();
  const back = new URL(decision.headers.get('location') ?? '');
  const code = back.searchParams.get('code');
  if (!code || back.searchParams.get('state') !== state) throw new Error(`no code in ${back}`);
  const token = await fetch(`${baseUrl}/api/v1/oauth/token`, {
    method: 'POST',
    headers: {
      authorization: `Basic ${Buffer.from(`${client.clientId}:${client.clientSecret}`).toString('base64')}`,
      'content-type': 'application/x-www-form-urlencoded',
    },
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      code,
      redirect_uri: client.redirectUri,
      code_verifier: verifier,
    }).toString(),
  });
  const tokens = (await (await expectStatus(token, 200, 'code exchange')).json()) as { access_token: string };
  const userinfo = await fetch(`${baseUrl}/api/v1/oauth/userinfo`, {
    headers: { authorization: `Bearer ${tokens.access_token}` },
  });
  await (await expectStatus(userinfo, 200, 'userinfo')).arrayBuffer();
}
