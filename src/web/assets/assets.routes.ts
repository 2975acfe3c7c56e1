import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { DEFAULT_AVATAR_PATH } from '../../modules/profiles/profile.presenter.js';
import { passkeyScript, webauthnBundle } from './passkey-scripts.js';
import { readStaticFile, type StaticFile } from './static-file.js';
import { pageScript, recoveryCodesScript, stylesheet } from './stylesheet.js';

/** Answers a static file, or 304 when the browser holds this very version. */
export function sendStatic(
  request: FastifyRequest,
  reply: FastifyReply,
  file: Pick<StaticFile, 'body' | 'etag'>,
  headers: { type: string; cacheControl: string },
): FastifyReply {
  reply
    .header('cache-control', headers.cacheControl)
    .header('etag', file.etag)
    .header('x-content-type-options', 'nosniff')
    .type(headers.type);
  if (request.headers['if-none-match'] === file.etag) return reply.code(304).send();
  return reply.send(file.body);
}

/**
 * Static assets: the pages' stylesheet and script, versioned in their URLs and cached for a year, and the default
 * avatar, whose URL is stable (search results and sites link to it), so it is cached for a day and
 * revalidated by its ETag.
 */
export const assetRoutes: FastifyPluginAsync = async (app) => {
  const css = stylesheet();
  const script = pageScript();
  const avatar = readStaticFile('default-avatar.png');

  app.get(
    css.path,
    {
      config: {
        auth: 'public',
        description: 'The stylesheet of the sign-in, consent and account pages',
        staticAsset: true,
      },
    },
    async (request, reply) =>
      sendStatic(request, reply, css, {
        type: 'text/css; charset=utf-8',
        cacheControl: 'public, max-age=31536000, immutable',
      }),
  );

  app.get(
    script.path,
    {
      config: {
        auth: 'public',
        description: "The pages' script: the show-password toggle of password fields",
        staticAsset: true,
      },
    },
    async (request, reply) =>
      sendStatic(request, reply, script, {
        type: 'text/javascript; charset=utf-8',
        cacheControl: 'public, max-age=31536000, immutable',
      }),
  );

  // The scripts of some pages only: the passkey buttons, the recovery codes' copy button.
  for (const [asset, description] of [
    [
      webauthnBundle(),
      "The WebAuthn browser library (@simplewebauthn/browser's bundle), for the passkey pages",
    ],
    [passkeyScript(), 'The passkey buttons and autofill of the sign-in and security pages'],
    [recoveryCodesScript(), 'The copy button of the recovery codes the security page shows once'],
  ] as const) {
    app.get(
      asset.path,
      { config: { auth: 'public', description, staticAsset: true } },
      async (request, reply) =>
        sendStatic(request, reply, asset, {
          type: 'text/javascript; charset=utf-8',
          cacheControl: 'public, max-age=31536000, immutable',
        }),
    );
  }

  // The accent colour of BRAND_ACCENT_COLOR (src/web/brand.ts), versioned by its content like the rest.
  const brandCss = app.brand.stylesheet;
  if (brandCss) {
    app.get(
      brandCss.path,
      {
        config: {
          auth: 'public',
          description: "The pages' accent colour (BRAND_ACCENT_COLOR), a stylesheet",
          staticAsset: true,
        },
      },
      async (request, reply) =>
        sendStatic(request, reply, brandCss, {
          type: 'text/css; charset=utf-8',
          cacheControl: 'public, max-age=31536000, immutable',
        }),
    );
  }

  app.get(
    DEFAULT_AVATAR_PATH,
    {
      config: {
        auth: 'public',
        description: 'The avatar shown for a user who has not set one (PNG)',
        staticAsset: true,
      },
    },
    async (request, reply) =>
      sendStatic(request, reply, avatar, { type: 'image/png', cacheControl: 'public, max-age=86400' }),
  );
};
