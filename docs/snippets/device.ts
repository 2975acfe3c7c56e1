/**
 * Sign-in on a device without a browser (a TV, a console, a command-line tool), with openid-client
 * v6 and the device authorization grant (RFC 8628): show a URL and a code, poll until the person
 * allowed it on their phone, then read their profile. The tokens are bound to a DPoP key, which
 * also gives a public client its refresh token.
 * npm install openid-client@6
 */
import * as oidc from 'openid-client';

export interface DeviceSignInOptions {
  /** The provider's issuer (its PUBLIC_URL), e.g. https://id.example. */
  issuer: string;
  clientId: string;
  /** Only for a confidential client; a device app is usually public and has none. */
  clientSecret?: string;
  scope: string;
  /** Plain http, only for a provider on this machine during development. */
  allowInsecureRequests?: boolean;
  /** Shows the person where to go and what to type (on the device's screen). */
  show(prompt: { url: string; code: string; urlWithCode: string; minutes: number }): void;
}

export interface DeviceSession {
  tokens: oidc.TokenEndpointResponse & oidc.TokenEndpointResponseHelpers;
  /** Keep it with the tokens: they work only with proofs of this key. */
  DPoP: oidc.DPoPHandle;
  config: oidc.Configuration;
}

export async function signInOnDevice(options: DeviceSignInOptions): Promise<DeviceSession> {
  const config = await oidc.discovery(
    new URL(options.issuer),
    options.clientId,
    undefined,
    options.clientSecret ? oidc.ClientSecretBasic(options.clientSecret) : oidc.None(),
    options.allowInsecureRequests ? { execute: [oidc.allowInsecureRequests] } : undefined,
  );
  // A real tool keeps this key pair (and the refresh token) to refresh later without asking again.
  const DPoP = oidc.getDPoPHandle(config, await oidc.randomDPoPKeyPair('ES256'));
  const started = await oidc.initiateDeviceAuthorization(config, { scope: options.scope });
  options.show({
    url: started.verification_uri,
    code: started.user_code,
    urlWithCode: started.verification_uri_complete ?? started.verification_uri,
    minutes: Math.round(started.expires_in / 60),
  });
  // Waits `interval` seconds between polls, longer after a slow_down, until the person decides;
  // access_denied, expired_token and any other error are thrown.
  const tokens = await oidc.pollDeviceAuthorizationGrant(config, started, undefined, { DPoP });
  return { tokens, DPoP, config };
}

// `node device.ts` signs in on this terminal with the client CLIENT_ID (registered with
// --device-grant) at the provider IDP_ISSUER, then prints who signed in.
if (import.meta.main) {
  const { IDP_ISSUER = 'http://localhost:3000', CLIENT_ID, CLIENT_SECRET } = process.env;
  if (!CLIENT_ID) {
    console.error('Set CLIENT_ID to that of a client registered with --device-grant.');
    process.exit(1);
  }
  const { protocol, hostname } = new URL(IDP_ISSUER);
  try {
    const { tokens, DPoP, config } = await signInOnDevice({
      issuer: IDP_ISSUER,
      clientId: CLIENT_ID,
      clientSecret: CLIENT_SECRET,
      scope: process.env.SCOPE ?? 'openid profile offline_access',
      allowInsecureRequests: protocol === 'http:' && ['localhost', '127.0.0.1', '[::1]'].includes(hostname),
      show: ({ url, code, urlWithCode, minutes }) =>
        process.stdout.write(
          `On your phone or computer, open ${url} and enter the code ${code}\n` +
            `(or open ${urlWithCode}). It works for ${minutes} minutes.\n`,
        ),
    });
    const sub = tokens.claims()?.sub as string;
    const profile = await oidc.fetchUserInfo(config, tokens.access_token, sub, { DPoP });
    process.stdout.write(
      `Signed in as ${profile.preferred_username} (sub ${sub}); ` +
        `scope: ${tokens.scope}; refresh token: ${tokens.refresh_token ? 'yes' : 'no'}\n`,
    );
  } catch (error) {
    // access_denied: the person chose Deny; expired_token: nobody entered the code in time.
    if (!(error instanceof oidc.ResponseBodyError)) throw error;
    console.error(`not signed in: ${error.error}`);
    process.exitCode = 1;
  }
}
