import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RESPONSE_EXAMPLES } from '../../src/http/openapi-examples.js';
import { OAUTH_DOCUMENTATION } from '../../src/http/openapi-oauth.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { makeClient, makeUser, mintCode } from '../helpers/factories.js';
import { basic, exchangeCode, postForm } from '../helpers/http.js';

/*
 * The examples and the OAuth endpoints' answers that the OpenAPI document describes by hand:
 * each example fits its route's response schema, and the real answers fit what is documented.
 */

interface Schema {
  type?: string | string[];
  enum?: unknown[];
  properties?: Record<string, Schema>;
  required?: string[];
  additionalProperties?: unknown;
  items?: Schema;
  anyOf?: Schema[];
}

/** Where `value` departs from `schema` (types, enums, required and unknown fields), by JSON path. */
function mismatches(value: unknown, schema: Schema, at = '$'): string[] {
  if (schema.anyOf) {
    return schema.anyOf.some((variant) => mismatches(value, variant, at).length === 0)
      ? []
      : [`${at}: fits no variant`];
  }
  if (schema.enum && !schema.enum.includes(value)) return [`${at}: ${JSON.stringify(value)} not in the enum`];
  const types = [schema.type ?? []].flat();
  const actual =
    value === null
      ? 'null'
      : Array.isArray(value)
        ? 'array'
        : Number.isInteger(value) && types.includes('integer')
          ? 'integer'
          : typeof value;
  if (types.length > 0 && !types.includes(actual)) return [`${at}: ${actual}, not ${types.join('|')}`];
  if (Array.isArray(value))
    return value.flatMap((item, i) => mismatches(item, schema.items ?? {}, `${at}[${i}]`));
  if (actual !== 'object' || !schema.properties) return [];
  const object = value as Record<string, unknown>;
  const found = (schema.required ?? [])
    .filter((name) => !(name in object))
    .map((name) => `${at}.${name}: missing`);
  for (const [name, field] of Object.entries(object)) {
    const property = schema.properties[name];
    if (property) found.push(...mismatches(field, property, `${at}.${name}`));
    else if (schema.additionalProperties === false || schema.additionalProperties === undefined)
      found.push(`${at}.${name}: not documented`);
  }
  return found;
}

type Media = { schema: Schema; example?: unknown };
let t: TestApp;
let paths: Record<string, Record<string, { responses: Record<string, { content?: Record<string, Media> }> }>>;

function documented(method: string, path: string, status: string): Media {
  const media = paths[path]?.[method.toLowerCase()]?.responses[status]?.content?.['application/json'];
  if (!media) throw new Error(`${method} ${path} ${status} has no JSON answer in the document`);
  return media;
}

beforeAll(async () => {
  t = await createTestApp();
  paths = (await t.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json().paths;
});
afterAll(() => t.close());

describe('the examples of the OpenAPI document', () => {
  const examples = Object.entries({ ...RESPONSE_EXAMPLES, ...exampleOfOAuth() }).flatMap(([key, byStatus]) =>
    Object.entries(byStatus).map(([status, example]) => [key, status, example] as const),
  );

  it.each(examples)('%s %s: is in the document and fits the response schema', (key, status, example) => {
    const [method = '', path = ''] = key.split(' ');
    const media = documented(method, path, status);
    expect(media.example).toEqual(example);
    expect(mismatches(example, media.schema)).toEqual([]);
  });

  it('the checker itself notices a wrong type, a missing field and an undocumented one', () => {
    const schema = documented('GET', '/api/v1/wallet/balance', '200').schema;
    expect(mismatches({ ok: true, balance: '1', currency: 'COIN' }, schema)).toEqual([
      '$.balance: string, not number',
    ]);
    expect(mismatches({ ok: true, balance: 1 }, schema)).toEqual(['$.currency: missing']);
    expect(mismatches({ ok: true, balance: 1, currency: 'COIN', x: 1 }, schema)).toEqual([
      '$.x: not documented',
    ]);
  });
});

function exampleOfOAuth(): Record<string, Record<string, unknown>> {
  const out: Record<string, Record<string, unknown>> = {};
  for (const [key, added] of Object.entries(OAUTH_DOCUMENTATION)) {
    const responses = (added.responses ?? {}) as Record<string, { content?: Record<string, Media> }>;
    for (const [status, response] of Object.entries(responses)) {
      const example = response.content?.['application/json']?.example;
      if (example !== undefined) out[key] = { ...out[key], [status]: example };
    }
  }
  return out;
}

describe('the OAuth endpoints answer as the document says', () => {
  it('token, introspection, revocation and PAR', async () => {
    const user = await makeUser(t);
    const client = await makeClient(t);
    const code = await mintCode(t, client, user, { scopes: ['openid', 'profile', 'offline_access'] });
    const token = await exchangeCode(t.app, client, code);
    expect(token.statusCode).toBe(200);
    expect(mismatches(token.json(), documented('POST', '/api/v1/oauth/token', '200').schema)).toEqual([]);
    expect(Object.keys(token.json())).toEqual(
      expect.arrayContaining([
        'access_token',
        'refresh_token',
        'id_token',
        'token_type',
        'expires_in',
        'scope',
      ]),
    );

    const auth = { authorization: basic(client) };
    const introspection = await postForm(
      t.app,
      '/api/v1/oauth/introspect',
      { token: token.json().access_token },
      auth,
    );
    expect(introspection.json()).toMatchObject({ active: true });
    expect(
      mismatches(introspection.json(), documented('POST', '/api/v1/oauth/introspect', '200').schema),
    ).toEqual([]);

    const revoked = await postForm(t.app, '/api/v1/oauth/revoke', { token: token.json().access_token }, auth);
    expect(revoked.statusCode).toBe(200);
    expect(mismatches(revoked.json(), documented('POST', '/api/v1/oauth/revoke', '200').schema)).toEqual([]);

    const pushed = await postForm(
      t.app,
      '/api/v1/oauth/par',
      { response_type: 'code', redirect_uri: client.redirectUri, state: 's', scope: 'openid' },
      auth,
    );
    expect(pushed.statusCode).toBe(201);
    expect(mismatches(pushed.json(), documented('POST', '/api/v1/oauth/par', '201').schema)).toEqual([]);
  });
});
