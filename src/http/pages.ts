import type { FastifyReply } from 'fastify';

/** Renders an HTML error page (never a redirect). */
export function renderErrorPage(
  reply: FastifyReply,
  status: number,
  title: string,
  message: string,
): FastifyReply {
  return reply.code(status).type('text/html; charset=utf-8').send(`<h1>${title}</h1><p>${message}</p>`);
}
