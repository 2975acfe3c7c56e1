import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REGISTRATION_DOCUMENTATION } from '../../src/http/openapi-registration.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import {
  initialToken,
  METADATA,
  manage,
  type Registered,
  register,
} from '../modules/oauth/registration.fixture.js';

/*
 * What the OpenAPI document says of the registration routes (src/http/openapi-registration.ts,
 * written by hand): the real answers and the examples fit the documented schemas, and each route
 * names the token it takes.
 */

interface Schema {
  type?: string;
  enum?: unknown[];
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
}

/** Where `value` departs from `schema`: a missing required field, an undocumented one, a wrong type or value. */
function mismatches(value: Record<string, unknown>, schema: Schema): string[] {
  const found = (schema.required ?? []).filter((name) => !(name in value)).map((name) => `${name}: missing`);
  for (const [name, field] of Object.entries(value)) {
    const property = schema.properties?.[name];
    const type = Array.isArray(field) ? 'array' : Number.isInteger(field) ? 'integer' : typeof field;
    if (!property) found.push(`${name}: not documented`);
    else if (property.type && property.type !== type) found.push(`${name}: ${type}, not ${property.type}`);
    else if (property.enum && !property.enum.includes(field))
      found.push(`${name}: ${String(field)} not in the enum`);
  }
  return found;
}

type Operation = {
  security?: unknown;
  responses: Record<
    string,
    { content?: Record<string, { schema: Schema; example?: Record<string, unknown> }> }
  >;
};
let t: TestApp;
let paths: Record<string, Record<string, Operation>>;

const operation = (method: string, path: string) => paths[path]?.[method.toLowerCase()] as Operation;
const answerSchema = (method: string, path: string, status: string) =>
  operation(method, path).responses[status]?.content?.['application/json'] as {
    schema: Schema;
    example?: Record<string, unknown>;
  };

beforeAll(async () => {
  t = await createTestApp();
  paths = (await t.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json().paths;
});
afterAll(() => t.close());

const MANAGED = '/api/v1/oauth/register/{client_id}';

describe('the registration routes in the OpenAPI document', () => {
  it('name the token each takes', () => {
    expect(operation('POST', '/api/v1/oauth/register').security).toEqual([{ initialAccessToken: [] }]);
    for (const method of ['GET', 'PUT', 'DELETE'])
      expect(operation(method, MANAGED).security).toEqual([{ registrationAccessToken: [] }]);
  });

  it('document answers that the real ones and the examples fit', async () => {
    const created = await register(t, await initialToken(t), {
      ...METADATA,
      logo_uri: 'https://site.example/logo.png',
      backchannel_logout_uri: 'https://site.example/bc',
    });
    expect(created.statusCode).toBe(201);
    const client = created.json() as Registered;
    const read = await manage(t, 'GET', client.client_id, client.registration_access_token);
    const replaced = await manage(t, 'PUT', client.client_id, client.registration_access_token, {
      ...METADATA,
      client_id: client.client_id,
    });
    const answers: Array<[string, string, string, Record<string, unknown>]> = [
      ['POST', '/api/v1/oauth/register', '201', client],
      ['GET', MANAGED, '200', read.json()],
      ['PUT', MANAGED, '200', replaced.json()],
    ];
    for (const [method, path, status, body] of answers) {
      const documented = answerSchema(method, path, status);
      expect(mismatches(body, documented.schema), `${method} ${path}`).toEqual([]);
      expect(mismatches(documented.example ?? {}, documented.schema), `${method} ${path} example`).toEqual(
        [],
      );
    }
    expect(Object.keys(REGISTRATION_DOCUMENTATION).sort()).toEqual([
      `DELETE ${MANAGED}`,
      `GET ${MANAGED}`,
      'POST /api/v1/oauth/register',
      `PUT ${MANAGED}`,
    ]);
  });
});
