import { afterAll, beforeAll } from 'vitest';
import { createTestApp, type TestApp } from '../../helpers/app.js';
import { makeClient, makeUser, type TestClient, type TestUser } from '../../helpers/factories.js';
import { basic, postForm } from '../../helpers/http.js';

/** What the token endpoint test files share: two clients and a user, codes minted through the services. */
export let t: TestApp;
export let client: TestClient;
export let other: TestClient;
export let user: TestUser;

export const introspect = async (token: string, as: TestClient = client) =>
  (await postForm(t.app, '/api/v1/oauth/introspect', { token }, { authorization: basic(as) })).json();

export function setUpTokenApp(): void {
  beforeAll(async () => {
    t = await createTestApp();
    client = await makeClient(t);
    other = await makeClient(t);
    user = await makeUser(t);
  });
  afterAll(() => t.close());
}
