import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { failed, succeeded } from '../helpers/cli.js';
import { type InProcessCli, inProcessCli } from '../helpers/cli-in-process.js';

/* `idp clients create --public --require-dpop`, `clients update --require-dpop`, and rotate-secret of a public client. */

let cli: InProcessCli;

beforeAll(async () => {
  cli = await inProcessCli({ PUBLIC_URL: 'https://id.example' });
});
afterAll(() => cli.database.drop());

const CREATE = ['clients', 'create', '--name', 'Phone app', '--site-url', 'https://app.example'];

describe('public clients and DPoP in the CLI', () => {
  it('creates a public client without a secret, and says so in text', async () => {
    const created = succeeded(
      await cli.idp([
        ...CREATE,
        '--redirect-uri',
        'https://app.example/cb',
        '--public',
        '--require-dpop',
        '--json',
      ]),
    );
    expect(created.client_secret).toBeUndefined();
    expect(created).toMatchObject({ token_endpoint_auth_method: 'none', dpop_bound_access_tokens: true });
    const row = await cli.database.db
      .selectFrom('clients')
      .select(['id', 'is_public'])
      .where('client_id', '=', created.client_id as string)
      .executeTakeFirstOrThrow();
    expect(row.is_public).toBe(true);
    const secrets = await cli.database.db
      .selectFrom('client_secrets')
      .select('id')
      .where('client_pk', '=', row.id)
      .execute();
    expect(secrets).toEqual([]);
    const text = await cli.idp([...CREATE, '--redirect-uri', 'https://app.example/cb', '--public']);
    expect(text.code).toBe(0);
    expect(text.stdout).not.toMatch(/^client_secret:/m);
    expect(text.stdout).toContain('A public client has no client_secret');
  });

  it('refuses to rotate the secret of a public client', async () => {
    const created = succeeded(
      await cli.idp([...CREATE, '--redirect-uri', 'https://app.example/cb', '--public', '--json']),
    );
    failed(
      await cli.idp(['clients', 'rotate-secret', created.client_id as string]),
      /is public .* no secret to rotate/,
    );
  });

  it('turns --require-dpop on and off on a confidential client, which keeps its secret', async () => {
    const created = succeeded(
      await cli.idp([...CREATE, '--redirect-uri', 'https://app.example/cb', '--json']),
    );
    expect(created).toMatchObject({
      client_secret: expect.stringMatching(/^sk_/),
      token_endpoint_auth_method: 'client_secret_basic',
      dpop_bound_access_tokens: false,
    });
    const id = created.client_id as string;
    expect(
      succeeded(await cli.idp(['clients', 'update', id, '--require-dpop', 'true', '--json'])),
    ).toMatchObject({
      dpop_bound_access_tokens: true,
    });
    const listed = succeeded(await cli.idp(['clients', 'list', '--json'])).clients as Array<
      Record<string, unknown>
    >;
    expect(listed.find((each) => each.client_id === id)).toMatchObject({ dpop_bound_access_tokens: true });
    expect(
      succeeded(await cli.idp(['clients', 'update', id, '--require-dpop', 'false', '--json'])),
    ).toMatchObject({
      dpop_bound_access_tokens: false,
    });
  });
});
