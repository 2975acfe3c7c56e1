import { execFile, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { guidePath, shellBlock } from '../../scripts/snippets.js';
import { systemClock } from '../../src/lib/clock.js';
import { createClient } from '../../src/modules/clients/clients.service.js';
import { makeUser, type TestUser } from '../helpers/factories.js';
import { hiddenFields } from '../helpers/html.js';
import { type Provider, startProvider, UserAgent } from './helpers.js';
import { makeReaderFolder, type ReaderFolder } from './reader.js';

/**
 * docs/integrating.md "Devices without a browser": its two `curl` requests against the listening
 * service, and its openid-client module run as the guide says (`node device.ts` in the folder its
 * `<!-- run:snippet-folder -->` block makes), while a person, over plain HTTP, signs in at the
 * printed URL, confirms the printed code at /device and allows it (the module then prints who
 * signed in) or denies it (it says so on stderr and exits 1). Both runs go side by side: each waits
 * the 5-second interval, twice with the DPoP nonce of its key's first proof.
 */
const guide = readFileSync(guidePath, 'utf8');
let provider: Provider;
let folder: ReaderFolder;
let clientId: string;

beforeAll(async () => {
  [provider, folder] = await Promise.all([startProvider(), makeReaderFolder(guide)]);
  const client = await createClient(
    provider.t.database.db,
    { config: provider.t.config, clock: systemClock },
    {
      // As the guide registers it: no redirect URI, which a device never receives.
      name: 'Lantern TV',
      siteUrl: 'https://lantern.example',
      redirectUris: [],
      isPublic: true,
      deviceGrant: true,
    },
  );
  clientId = client.client_id;
}, 180_000);
afterAll(async () => {
  await provider?.close();
  await folder?.remove();
});

const run = promisify(execFile);

/** The guide's block `name`, run with the shell variables it names; its output parsed as JSON. */
async function curl(name: string, vars: Record<string, string>): Promise<Record<string, unknown>> {
  const { stdout } = await run('bash', ['-euc', shellBlock(guide, name)], {
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', IDP: provider.issuer, CLIENT_ID: clientId, ...vars },
  });
  return JSON.parse(stdout) as Record<string, unknown>;
}

describe('the guide’s device requests, with curl', () => {
  it('starts a device authorization, and a poll before any decision is authorization_pending', async () => {
    const started = await curl('device-authorization', {});
    expect(started).toEqual({
      device_code: expect.stringMatching(/^dc_[A-Za-z0-9_-]{43}$/),
      user_code: expect.stringMatching(/^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/),
      verification_uri: `${provider.issuer}/device`,
      verification_uri_complete: `${provider.issuer}/device?user_code=${started.user_code}`,
      expires_in: 600,
      interval: 5,
    });
    expect(await curl('device-poll', { DEVICE_CODE: started.device_code as string })).toEqual({
      ok: false,
      error: 'authorization_pending',
      error_description: 'The user has not yet allowed or denied the request; poll again after the interval.',
    });
  });
});

/** `node device.ts` in the reader's folder, with only the variables the guide sets (and PATH, HOME). */
function startDevice(vars: Record<string, string>) {
  const child = spawn('node', ['device.ts'], {
    cwd: folder.dir,
    env: { PATH: `${path.dirname(process.execPath)}:${process.env.PATH}`, HOME: process.env.HOME, ...vars },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output = { stdout: '', stderr: '' };
  const changed = new Set<() => void>();
  for (const stream of ['stdout', 'stderr'] as const)
    child[stream].on('data', (chunk: Buffer) => {
      output[stream] += chunk.toString();
      for (const wake of changed) wake();
    });
  const exited = new Promise<number | null>((resolve) => child.once('close', resolve));
  return {
    output,
    exited,
    /** Resolves once `stream` matches `pattern` (at most 30 s), with the match. */
    waitFor(stream: 'stdout' | 'stderr', pattern: RegExp): Promise<RegExpMatchArray> {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          changed.delete(check);
          reject(new Error(`node device.ts never wrote ${pattern}:\n${output.stdout}${output.stderr}`));
        }, 30_000);
        const check = () => {
          const match = pattern.exec(output[stream]);
          if (!match) return;
          clearTimeout(timer);
          changed.delete(check);
          resolve(match);
        };
        changed.add(check);
        check();
      });
    },
  };
}

/**
 * One run of the module and its person: the printed URL and code, the person's sign-in at the
 * code's URL, the code confirmed at /device, then `decision`. What the module printed at the end.
 */
async function deviceSignIn(user: TestUser, decision: 'allow' | 'deny') {
  const device = startDevice({ IDP_ISSUER: provider.issuer, CLIENT_ID: clientId });
  const printed = await device.waitFor(
    'stdout',
    /^On your phone or computer, open (\S+) and enter the code ([A-Z]{4}-[A-Z]{4})\n\(or open (\S+)\)\. It works for 10 minutes\.\n/,
  );
  const [, url, code, urlWithCode] = printed as unknown as [string, string, string, string];
  expect(url).toBe(`${provider.issuer}/device`);
  expect(urlWithCode).toBe(`${url}?user_code=${code}`);

  const browser = new UserAgent(provider.issuer);
  const page = await browser.walk(urlWithCode, { user });
  expect(page.visited.map((visit) => `${visit.method} ${visit.url.pathname}`)).toEqual([
    'GET /device',
    'GET /signin',
    'POST /signin',
    'GET /device',
  ]);
  const confirmation = await browser.request(new URL('/device', provider.issuer), {
    method: 'POST',
    form: { ...hiddenFields(page.body, '/device'), user_code: code },
  });
  const body = await confirmation.text();
  expect(body).toContain('Lantern TV wants to sign in on a device');
  const done = await browser.request(new URL('/device/decision', provider.issuer), {
    method: 'POST',
    form: { ...hiddenFields(body, '/device/decision'), decision },
  });
  expect(done.status).toBe(200);
  return { device, code: await device.exited };
}

describe('the guide’s openid-client module: node device.ts', () => {
  it('prints the URL and the code, then who signed in once allowed; a denial exits 1', {
    timeout: 60_000,
  }, async () => {
    const [allowing, denying] = await Promise.all([makeUser(provider.t), makeUser(provider.t)]);
    const [allowed, denied] = await Promise.all([
      deviceSignIn(allowing, 'allow'),
      deviceSignIn(denying, 'deny'),
    ]);
    expect(allowed.code).toBe(0);
    expect(allowed.device.output.stderr).toBe('');
    expect(allowed.device.output.stdout.split('\n').at(-2)).toBe(
      `Signed in as ${allowing.username} (sub ${allowing.id}); scope: openid profile offline_access; refresh token: yes`,
    );
    expect(denied.code).toBe(1);
    expect(denied.device.output.stderr).toBe('not signed in: access_denied\n');
    expect(denied.device.output.stdout).not.toContain('Signed in as');
  });
});
