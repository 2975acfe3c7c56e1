import type { Kysely } from 'kysely';
import type { Context } from '../../../context.js';
import type { Database } from '../../../db/schema.js';
import type { Client } from '../../clients/client.js';
import type { TokenResponse } from '../tokens.service.js';

/** The parameters of a token request, as flat strings (a repeated one was refused already). */
export type TokenParameters = Record<string, string | undefined>;

/**
 * One grant of the token endpoint (after node-oidc-provider's lib/actions/grants/): its
 * `grant_type`, the parameters it requires (checked, in order, before `handle`) and accepts
 * besides, and the handler. `jkt`: the thumbprint of the request's checked DPoP proof key, or null
 * (RFC 9449 §5).
 */
export interface Grant {
  grantType: string;
  parameters: { required: readonly string[]; optional: readonly string[] };
  handle(
    db: Kysely<Database>,
    ctx: Context,
    client: Client,
    params: TokenParameters,
    jkt: string | null,
  ): Promise<TokenResponse>;
}
