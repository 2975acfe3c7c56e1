import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { Deps } from '../../context.js';
import { discoveryDocument } from './discovery.js';
import { readJwks } from './keys.service.js';
import { discoverySchema, jwksSchema } from './oidc.schemas.js';

/**
 * How long clients and caches may keep discovery and the JWKS. A client that meets an unknown
 * `kid` refetches the JWKS; a rotated-out key stays published, so a cached set never goes wrong.
 */
const PUBLIC_CACHE = 'public, max-age=300';

/** Discovery and JWKS. */
export const oidcRoutes: FastifyPluginAsync<Deps> = async (app, deps) => {
  const routes = app.withTypeProvider<ZodTypeProvider>();
  const document = discoveryDocument(deps.ctx.config.PUBLIC_URL, {
    registration: deps.ctx.config.CLIENT_REGISTRATION !== 'closed',
  });

  routes.get(
    '/.well-known/openid-configuration',
    {
      config: { auth: 'public', description: 'OpenID Connect discovery document (provider metadata)' },
      schema: { response: { 200: discoverySchema } },
    },
    async (_request, reply) => {
      reply.header('cache-control', PUBLIC_CACHE);
      return document;
    },
  );

  routes.get(
    '/api/v1/oauth/jwks',
    {
      config: { auth: 'public', description: 'JSON Web Key Set: the public keys that verify id_tokens' },
      schema: { response: { 200: jwksSchema } },
    },
    async (_request, reply) => {
      const jwks = await readJwks(deps.db, deps.ctx);
      reply.header('cache-control', PUBLIC_CACHE);
      return jwks;
    },
  );
};
