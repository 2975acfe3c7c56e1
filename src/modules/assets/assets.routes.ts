import type { FastifyPluginAsync } from 'fastify';
import { stylesheet } from './stylesheet.js';

/** Static assets of the pages: one stylesheet, versioned in its URL and cached for a year. */
export const assetRoutes: FastifyPluginAsync = async (app) => {
  const css = stylesheet();

  app.get(
    css.path,
    { config: { auth: 'public', description: 'The stylesheet of the sign-in, consent and account pages' } },
    async (request, reply) => {
      reply
        .header('cache-control', 'public, max-age=31536000, immutable')
        .header('etag', css.etag)
        .header('x-content-type-options', 'nosniff')
        .type('text/css; charset=utf-8');
      if (request.headers['if-none-match'] === css.etag) return reply.code(304).send();
      return reply.send(css.body);
    },
  );
};
