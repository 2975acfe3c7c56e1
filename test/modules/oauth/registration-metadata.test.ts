import { describe, expect, it } from 'vitest';
import { ClientInputError } from '../../../src/modules/clients/client-input.js';
import type { ClientView } from '../../../src/modules/clients/clients.schemas.js';
import {
  RegistrationError,
  registrationInput,
} from '../../../src/modules/oauth/registration/registration-metadata.js';
import {
  asRegistrationError,
  registeredMetadata,
  replacementOf,
} from '../../../src/modules/oauth/registration/registration-view.js';

/* RFC 7591 §2 metadata to the clients service's input and back, with RFC 7591 §3.2.2's errors. */

const MINIMAL = { redirect_uris: ['https://site.example/cb'], client_uri: 'https://site.example' };

function refusal(body: unknown): { error: string; description: string } {
  try {
    registrationInput(body);
  } catch (error) {
    expect(error).toBeInstanceOf(RegistrationError);
    const refused = error as RegistrationError;
    expect(refused.status).toBe(400);
    return { error: refused.error, description: refused.description };
  }
  throw new Error('accepted');
}

describe('registration metadata', () => {
  it('maps every supported field', () => {
    expect(
      registrationInput({
        ...MINIMAL,
        client_name: ' Site ',
        post_logout_redirect_uris: ['https://site.example/bye'],
        logo_uri: 'https://site.example/logo.png',
        backchannel_logout_uri: 'https://site.example/bc',
        id_token_signed_response_alg: 'ES256',
        token_endpoint_auth_method: 'client_secret_post',
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        dpop_bound_access_tokens: true,
        require_pushed_authorization_requests: true,
        scope: 'openid profile offline_access',
        contacts: ['ops@site.example'],
        unknown_field: { nested: 1 },
      }),
    ).toEqual({
      name: 'Site',
      siteUrl: 'https://site.example',
      redirectUris: ['https://site.example/cb'],
      postLogoutRedirectUris: ['https://site.example/bye'],
      isPublic: false,
      requirePar: true,
      requireDpop: true,
      deviceGrant: false,
      idTokenAlg: 'ES256',
      logoUri: 'https://site.example/logo.png',
      backchannelLogoutUri: 'https://site.example/bc',
    });
  });

  it('takes the defaults of RFC 7591 §2 and names the client after its site when it sends no name', () => {
    expect(registrationInput(MINIMAL)).toEqual({
      name: 'site.example',
      siteUrl: 'https://site.example',
      redirectUris: ['https://site.example/cb'],
      postLogoutRedirectUris: [],
      isPublic: false,
      requirePar: false,
      requireDpop: false,
      deviceGrant: false,
    });
    expect(registrationInput({ ...MINIMAL, token_endpoint_auth_method: 'none' }).isPublic).toBe(true);
  });

  it('takes the device grant type (RFC 8628 §3.4) as the device grant setting, alone or with others', () => {
    const DEVICE = 'urn:ietf:params:oauth:grant-type:device_code';
    expect(registrationInput({ ...MINIMAL, grant_types: ['authorization_code', DEVICE] }).deviceGrant).toBe(
      true,
    );
    expect(registrationInput({ ...MINIMAL, grant_types: [DEVICE] }).deviceGrant).toBe(true);
    expect(registrationInput({ ...MINIMAL, grant_types: ['refresh_token'] }).deviceGrant).toBe(false);
  });

  it('requires client_uri and says why', () => {
    const { error, description } = refusal({ redirect_uris: ['https://site.example/cb'] });
    expect(error).toBe('invalid_client_metadata');
    expect(description).toContain('client_uri is required here');
  });

  it('requires redirect_uris, with invalid_redirect_uri', () => {
    expect(refusal({ client_uri: 'https://site.example' }).error).toBe('invalid_redirect_uri');
    expect(refusal({ ...MINIMAL, redirect_uris: [] }).error).toBe('invalid_redirect_uri');
    expect(refusal({ ...MINIMAL, redirect_uris: Array(21).fill('https://site.example/cb') }).error).toBe(
      'invalid_redirect_uri',
    );
  });

  it('takes no redirect_uris for the device grant without authorization_code (RFC 7591 §2)', () => {
    const DEVICE = 'urn:ietf:params:oauth:grant-type:device_code';
    const device = { client_uri: 'https://site.example', grant_types: [DEVICE] };
    expect(registrationInput(device)).toMatchObject({ redirectUris: [], deviceGrant: true });
    expect(
      registrationInput({ ...device, redirect_uris: [], grant_types: ['refresh_token', DEVICE] })
        .redirectUris,
    ).toEqual([]);
    const both = refusal({ ...device, grant_types: ['authorization_code', DEVICE] });
    expect(both.error).toBe('invalid_redirect_uri');
    expect(both.description).toContain(`unless grant_types holds ${DEVICE} and not authorization_code`);
  });

  it.each([
    ['not an object', []],
    ['null', null],
    ['a string', 'x'],
    ['redirect_uris not strings', { ...MINIMAL, redirect_uris: [1] }],
    ['redirect_uris a string', { ...MINIMAL, redirect_uris: 'https://site.example/cb' }],
    ['client_uri a number', { ...MINIMAL, client_uri: 5 }],
    ['a huge client_name', { ...MINIMAL, client_name: 'a'.repeat(70_000) }],
    ['a huge redirect URI', { ...MINIMAL, redirect_uris: [`https://site.example/${'a'.repeat(5000)}`] }],
    ['a flag as a string', { ...MINIMAL, dpop_bound_access_tokens: 'true' }],
    ['private_key_jwt', { ...MINIMAL, token_endpoint_auth_method: 'private_key_jwt' }],
    ['client_credentials', { ...MINIMAL, grant_types: ['authorization_code', 'client_credentials'] }],
    ['implicit', { ...MINIMAL, grant_types: ['implicit'] }],
    ['a misspelt device grant', { ...MINIMAL, grant_types: ['urn:ietf:params:oauth:grant-type:device'] }],
    ['response type token', { ...MINIMAL, response_types: ['code', 'token'] }],
    ['response type id_token', { ...MINIMAL, response_types: ['id_token'] }],
    ['an unknown scope', { ...MINIMAL, scope: 'openid admin' }],
    ['the wallet scope', { ...MINIMAL, scope: 'openid wallet' }],
    ['the wallet right', { ...MINIMAL, wallet: true }],
    ['the official mobile app', { ...MINIMAL, official_mobile: true }],
    [
      'too many post-logout URIs',
      { ...MINIMAL, post_logout_redirect_uris: Array(21).fill('https://a.example') },
    ],
  ])('refuses %s with invalid_client_metadata', (_name, body) => {
    const { error, description } = refusal(body);
    expect(error).toBe('invalid_client_metadata');
    expect(description.length).toBeLessThan(300);
  });

  it('says which grant type, response type or scope it refuses', () => {
    expect(refusal({ ...MINIMAL, grant_types: ['client_credentials'] }).description).toContain(
      "'client_credentials'",
    );
    expect(refusal({ ...MINIMAL, scope: 'openid wallet' }).description).toContain('developer portal');
  });
});

describe('refusals of the clients service', () => {
  it('name the metadata fields, with invalid_redirect_uri for a redirect URI', () => {
    const redirect = asRegistrationError(
      new ClientInputError({ redirectUris: 'redirect URI must be https', name: 'name must not be empty' }),
    ) as RegistrationError;
    expect(redirect.error).toBe('invalid_redirect_uri');
    expect(redirect.description).toBe(
      'redirect_uris: redirect URI must be https; client_name: name must not be empty',
    );
    const site = asRegistrationError(
      new ClientInputError({ siteUrl: 'site URL must be https' }),
    ) as RegistrationError;
    expect(site.error).toBe('invalid_client_metadata');
    expect(site.description).toBe('client_uri: site URL must be https');
    const alg = asRegistrationError(new ClientInputError({ idTokenAlg: 'no' })) as RegistrationError;
    expect(alg.description).toBe('id_token_signed_response_alg: no');
  });

  it('leave other errors alone', () => {
    const other = new Error('x');
    expect(asRegistrationError(other)).toBe(other);
  });
});

const VIEW: ClientView = {
  client_id: 'pk_abc',
  name: 'Site',
  site_url: 'https://site.example',
  redirect_uris: ['https://site.example/a', 'https://site.example/b'],
  post_logout_redirect_uris: ['https://site.example/bye'],
  wallet: false,
  official_mobile: false,
  require_pushed_authorization_requests: false,
  device_grant: false,
  id_token_signed_response_alg: 'ES256',
  token_endpoint_auth_method: 'client_secret_basic',
  dpop_bound_access_tokens: false,
  backchannel_logout_uri: null,
  logo_uri: 'https://site.example/logo.png',
  disabled: false,
  created_at: '2026-06-01T12:00:00.000Z',
};

describe('registered metadata', () => {
  it('answers RFC 7591 §3.2.1 fields, without empty optional ones', () => {
    expect(registeredMetadata(VIEW, 'https://id.example')).toEqual({
      client_id: 'pk_abc',
      client_id_issued_at: 1780315200,
      client_secret_expires_at: 0,
      registration_client_uri: 'https://id.example/api/v1/oauth/register/pk_abc',
      client_name: 'Site',
      client_uri: 'https://site.example',
      redirect_uris: VIEW.redirect_uris,
      post_logout_redirect_uris: VIEW.post_logout_redirect_uris,
      logo_uri: 'https://site.example/logo.png',
      id_token_signed_response_alg: 'ES256',
      token_endpoint_auth_method: 'client_secret_basic',
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      dpop_bound_access_tokens: false,
      require_pushed_authorization_requests: false,
    });
    const publicClient = registeredMetadata(
      { ...VIEW, token_endpoint_auth_method: 'none' },
      'https://id.example',
    );
    expect(publicClient).not.toHaveProperty('client_secret_expires_at');
  });

  it('lists the device grant type among grant_types of a client that may use it', () => {
    expect(registeredMetadata({ ...VIEW, device_grant: true }, 'https://id.example').grant_types).toEqual([
      'authorization_code',
      'refresh_token',
      'urn:ietf:params:oauth:grant-type:device_code',
    ]);
  });

  it('leaves out the code flow of a device client without redirect URIs', () => {
    const device = registeredMetadata(
      { ...VIEW, device_grant: true, redirect_uris: [] },
      'https://id.example',
    );
    expect(device).toMatchObject({
      redirect_uris: [],
      grant_types: ['refresh_token', 'urn:ietf:params:oauth:grant-type:device_code'],
      response_types: [],
    });
  });
});

describe('a replacement (RFC 7592 §2.2)', () => {
  it('changes every field, removes what is left out and defaults the rest', () => {
    const input = registrationInput({
      ...MINIMAL,
      redirect_uris: ['https://site.example/b', 'https://site.example/c'],
      client_name: 'New',
    });
    expect(replacementOf(VIEW, input)).toEqual({
      name: 'New',
      siteUrl: 'https://site.example',
      requirePar: false,
      requireDpop: false,
      deviceGrant: false,
      idTokenAlg: 'RS256',
      addRedirectUris: ['https://site.example/c'],
      removeRedirectUris: ['https://site.example/a'],
      addPostLogoutRedirectUris: [],
      removePostLogoutRedirectUris: ['https://site.example/bye'],
      logoUri: '',
      backchannelLogoutUri: '',
    });
  });

  it('refuses to turn a confidential client public, or back', () => {
    const toPublic = registrationInput({ ...MINIMAL, token_endpoint_auth_method: 'none' });
    expect(() => replacementOf(VIEW, toPublic)).toThrow(/cannot change between none and a secret/);
    const toSecret = registrationInput(MINIMAL);
    expect(() => replacementOf({ ...VIEW, token_endpoint_auth_method: 'none' }, toSecret)).toThrow(
      RegistrationError,
    );
  });
});
