import type { FastifyReply } from 'fastify';
import { stylesheet } from '../modules/assets/stylesheet.js';

/**
 * Server-rendered pages (views/*.ejs). A page is its own template rendered first, then wrapped in
 * views/layout.ejs (which receives the page's HTML as `body`). Templates escape every value with
 * `<%= %>`; only the layout's `body`, our own rendered template, is inserted raw.
 */
export type PageTemplate = 'signin' | 'signup' | 'account' | 'consent' | 'error' | 'reference';

/** The name the pages use for the service. */
export const SERVICE_NAME = 'idp';

const TITLES: Record<PageTemplate, string> = {
  signin: 'Sign in',
  signup: 'Create an account',
  account: 'Your account',
  consent: 'Allow access?',
  error: 'Something went wrong',
  reference: 'API reference',
};

/**
 * Headers of every page: never cached (they carry CSRF tokens and personal data), never framed
 * (clickjacking of the sign-in and consent buttons), no script at all, styles only from here.
 * No CSP `form-action`: browsers apply it to the redirect that follows the consent form, which
 * goes to the client's redirect_uri.
 */
function setPageHeaders(reply: FastifyReply): void {
  reply
    .header('cache-control', 'no-store')
    .header(
      'content-security-policy',
      "default-src 'none'; style-src 'self'; img-src 'self' data:; base-uri 'none'; frame-ancestors 'none'",
    )
    .header('x-frame-options', 'DENY')
    .header('x-content-type-options', 'nosniff')
    .header('referrer-policy', 'no-referrer')
    .type('text/html; charset=utf-8');
}

async function render(reply: FastifyReply, template: PageTemplate, data: Record<string, unknown>) {
  const body = await reply.viewAsync(template, data);
  const title = typeof data.title === 'string' && data.title ? data.title : TITLES[template];
  return reply.viewAsync('layout', {
    title,
    serviceName: SERVICE_NAME,
    stylesheetHref: stylesheet().href,
    body,
  });
}

/**
 * Renders views/<template>.ejs inside the layout and sends it, with the status already set on the
 * reply (`renderPage(reply.code(401), 'signin', …)`) and `Cache-Control: no-store`.
 * Return what it returns from the handler (`return renderPage(…)`): the page is sent asynchronously.
 *
 * The consent page takes `{ csrfToken, requestId, client: { name, siteUrl }, user: { username },
 * scopes: [{ name, description }], emailRequested, walletRequested }`.
 */
export function renderPage(
  reply: FastifyReply,
  template: PageTemplate,
  data: Record<string, unknown>,
): FastifyReply {
  setPageHeaders(reply);
  render(reply, template, data).then(
    (html) => reply.send(html),
    (error: unknown) => reply.send(error),
  );
  return reply;
}

function escapeHtml(text: string): string {
  return text.replace(
    /[&<>"']/g,
    (char) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[char] ?? char,
  );
}

/** Renders an HTML error page (never a redirect). Return it from the handler. */
export function renderErrorPage(
  reply: FastifyReply,
  status: number,
  title: string,
  message: string,
): FastifyReply {
  reply.code(status);
  setPageHeaders(reply);
  render(reply, 'error', { title, message, status }).then(
    (html) => reply.send(html),
    (error: unknown) => {
      // The error page must not fail in turn: a plain page, and the cause in the log.
      reply.log.error({ err: error }, 'the error page could not be rendered');
      reply.send(
        `<!doctype html><html lang="en"><meta charset="utf-8"><title>${escapeHtml(title)}</title>` +
          `<h1>${escapeHtml(title)}</h1><p>${escapeHtml(message)}</p></html>`,
      );
    },
  );
  return reply;
}
