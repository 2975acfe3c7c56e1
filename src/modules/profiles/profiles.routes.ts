import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Deps } from '../../context.js';
import { bearerContext, requireBearer } from '../../http/bearer-auth.js';
import { presentMe, presentUserinfo } from './profile.presenter.js';

/** The presenter owns the fields; these schemas only fix the envelope. */
const userinfoSchema = z.record(z.string(), z.unknown());
const meSchema = z.looseObject({ ok: z.literal(true), user: userinfoSchema });

/** Profile data is personal: no cache may keep it (CONTRIBUTING.md security habits; OIDC Core §5.3.2). */
function noStore(reply: FastifyReply): void {
  reply.header('cache-control', 'no-store').header('pragma', 'no-cache');
}

/** Userinfo and /me. */
export const profileRoutes: FastifyPluginAsync<Deps> = async (app, deps) => {
  const routes = app.withTypeProvider<ZodTypeProvider>();
  const bearer = requireBearer(deps);

  /** The token owner's claims, gated by the token's granted scopes exactly as the id_token is. */
  const userinfo = (request: FastifyRequest) => {
    const context = bearerContext(request);
    return presentUserinfo(context.user, context.scopes, deps.ctx.config.PUBLIC_URL);
  };

  // OIDC Core §5.3.1: the UserInfo endpoint answers GET and POST.
  for (const method of ['GET', 'POST'] as const) {
    routes.route({
      method,
      url: '/api/v1/oauth/userinfo',
      config: {
        auth: 'bearer',
        description: "The token owner's profile, limited to the granted scopes (OIDC UserInfo)",
      },
      schema: { response: { 200: userinfoSchema } },
      preHandler: bearer,
      handler: async (request, reply) => {
        noStore(reply);
        return userinfo(request);
      },
    });
  }

  routes.get(
    '/api/v1/me',
    {
      config: { auth: 'bearer', description: "The token owner's profile: {ok, user, …every userinfo field}" },
      schema: { response: { 200: meSchema } },
      preHandler: bearer,
    },
    async (request, reply) => {
      noStore(reply);
      // docs/api.md: the payload under `user` and, once more, merged at the top level.
      return presentMe(userinfo(request)) as z.infer<typeof meSchema>;
    },
  );
};
