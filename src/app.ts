import { randomUUID } from 'node:crypto';
import cookie from '@fastify/cookie';
import formbody from '@fastify/formbody';
import swagger from '@fastify/swagger';
import view from '@fastify/view';
import ejs from 'ejs';
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import { validatorCompiler } from 'fastify-type-provider-zod';
import type { Kysely } from 'kysely';
import type { Config } from './config.js';
import type { Context, Deps } from './context.js';
import type { ChangeSync } from './db/change-feed.js';
import type { Database } from './db/schema.js';
import { installAfterResponse } from './http/after-response.js';
import {
  answerClientError,
  answerConnect,
  answerFrameworkError,
  installLingeringClose,
} from './http/connection-errors.js';
import { installDpopNonce } from './http/dpop-nonce.js';
import { installErrorHandling } from './http/error-handler.js';
import { installInputGuard } from './http/input-guard.js';
import { createLogger } from './http/logger.js';
import { installMetrics, type PoolStats } from './http/metrics.js';
import { openApiOptions } from './http/openapi.js';
import { installRateLimits } from './http/rate-limit.js';
import { answeredError, RequestLogController } from './http/request-log.js';
import { RouteRegistry } from './http/route-registry.js';
import { installSecurityHeaders } from './http/security-headers.js';
import { responseSerializerCompiler } from './http/serializer.js';
import { type Clock, systemClock } from './lib/clock.js';
import { viewsDir } from './lib/paths.js';
import type { DevicePollCache } from './modules/device/device-poll-cache.js';
import { RedisDpopReplayStore } from './modules/dpop/dpop-replay-store.js';
import { mobileRoutes } from './modules/mobile/mobile.routes.js';
import type { ClientCache } from './modules/oauth/client-cache.js';
import { oauthRoutes } from './modules/oauth/oauth.routes.js';
import { registrationRoutes } from './modules/oauth/registration/registration.routes.js';
import { oidcRoutes } from './modules/oidc/oidc.routes.js';
import type { AccessTokenCache } from './modules/oidc/token-cache.js';
import { platformRoutes } from './modules/platform/platform.routes.js';
import { premiumRoutes } from './modules/premium/premium.routes.js';
import { profileRoutes } from './modules/profiles/profiles.routes.js';
import { searchRoutes } from './modules/search/search.routes.js';
import { walletRoutes } from './modules/wallet/wallet.routes.js';
import { accountRoutes } from './web/account.routes.js';
import { authorizeRoutes } from './web/authorize.routes.js';
import { brandOf } from './web/brand.js';
import { catalogueRoutes } from './web/catalogue.routes.js';
import { consoleRoutes } from './web/console/console.routes.js';
import { installConsoleGuard } from './web/console/console-guard.js';
import { logoutRoutes } from './web/logout.routes.js';
import { installPageGuards } from './web/page-guards.js';
import { renderBrowserError } from './web/pages.js';
import { passkeyRoutes } from './web/passkeys.routes.js';

export interface BuildAppOptions {
  config: Config;
  db: Kysely<Database>;
  clock?: Clock;
  logger?: FastifyBaseLogger;
  tokenCache?: AccessTokenCache;
  clientCache?: ClientCache;
  devicePollCache?: DevicePollCache;
  changes?: ChangeSync;
  /** The PostgreSQL pool's connections, for the metrics. */
  poolStats?: () => PoolStats;
}

/** JSON and form bodies up to 1 MiB; larger ones get 413 `payload_too_large`. */
const BODY_LIMIT = 1024 * 1024;

/**
 * Node's server options that bound how long a request may take to arrive. Fastify turns Node's own
 * 300 s `requestTimeout` off unless given one, so a body sent a byte a second held its connection
 * for ever; Node's 60 s headers timeout was checked only every 30 s. Both now end at the one
 * setting (a 408, then the connection is closed), checked every second at most: the timeout's
 * only cost is walking the connections still receiving a request.
 */
function requestTimeouts(timeoutMs: number) {
  return {
    requestTimeout: timeoutMs,
    // Node requires headersTimeout <= requestTimeout; headers are part of the request.
    headersTimeout: timeoutMs,
    connectionsCheckingInterval: Math.min(1_000, Math.floor(timeoutMs / 4)),
  };
}

/** Builds the application without listening: the server and every test use this. */
/** RFC 8628 §3.5: a waiting device's answers revoke nothing, and a device polls every few seconds. */
const POLLING_ANSWERS: ReadonlySet<string> = new Set(['authorization_pending', 'slow_down', 'expired_token']);

export async function buildApp(options: BuildAppOptions): Promise<FastifyInstance> {
  const ctx: Context = {
    config: options.config,
    clock: options.clock ?? systemClock,
    ...(options.tokenCache ? { tokenCache: options.tokenCache } : {}),
    ...(options.clientCache ? { clientCache: options.clientCache } : {}),
    ...(options.devicePollCache ? { devicePollCache: options.devicePollCache } : {}),
  };
  const deps: Deps = { db: options.db, ctx };
  const app = Fastify({
    loggerInstance: options.logger ?? (createLogger(options.config) as FastifyBaseLogger),
    // pino's child() takes its fast path without an options object; Fastify passes an empty one
    // unless a route sets its own log level. This runs on every request.
    childLoggerFactory: (logger, bindings, childOptions) =>
      childOptions.level === undefined ? logger.child(bindings) : logger.child(bindings, childOptions),
    // One line per request, written once it is answered (src/http/request-log.ts).
    logController: new RequestLogController(),
    bodyLimit: BODY_LIMIT,
    // A slow sender cannot hold a connection past HTTP_REQUEST_TIMEOUT_MS (docs/operating.md).
    // Fastify sets the server's requestTimeout itself from its own option, after creating it.
    requestTimeout: options.config.HTTP_REQUEST_TIMEOUT_MS,
    http: requestTimeouts(options.config.HTTP_REQUEST_TIMEOUT_MS),
    trustProxy: options.config.TRUST_PROXY,
    // Request ids are ours: an id sent by the caller is not trusted into our logs.
    genReqId: () => randomUUID(),
    requestIdHeader: false,
    // Our own onRequest hook answers 503 in the contract's shape while draining.
    return503OnClosing: false,
    forceCloseConnections: 'idle',
    clientErrorHandler: answerClientError,
    frameworkErrors: answerFrameworkError,
    routerOptions: { maxParamLength: 200 },
  });
  // CONNECT gets an answer in the contract's shape; an `Upgrade` request, with no `upgrade`
  // listener, is answered by its route as any other (Node 24).
  app.server.on('connect', answerConnect(app.log));
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(responseSerializerCompiler({ verify: options.config.NODE_ENV !== 'production' }));

  const registry = new RouteRegistry();
  app.addHook('onRoute', registry.onRoute);
  installSecurityHeaders(app, options.config);
  installLingeringClose(app);
  installErrorHandling(app, registry, renderBrowserError);
  installInputGuard(app);
  installDpopNonce(app, ctx);
  // RFC 9449 §11.1: with several instances sharing Redis, used DPoP proofs are kept there.
  if (options.config.REDIS_URL) {
    const store = await RedisDpopReplayStore.connect(
      options.config.REDIS_URL,
      app.log,
      options.config.REDIS_KEY_PREFIX,
    );
    ctx.dpopReplayStore = store;
    app.addHook('onClose', (_instance, done) => {
      store.close();
      done();
    });
  }
  await app.register(formbody, { bodyLimit: BODY_LIMIT });
  app.decorate('secureCookies', options.config.PUBLIC_URL.startsWith('https:'));
  app.decorate('brand', brandOf(options.config));
  // The first secret signs; the former ones (COOKIE_SECRET_PREVIOUS) still verify, during a rotation.
  await app.register(cookie, {
    secret: [options.config.COOKIE_SECRET, ...options.config.COOKIE_SECRET_PREVIOUS],
  });
  await app.register(view, { engine: { ejs }, root: viewsDir, viewExt: 'ejs' });
  await app.register(swagger, openApiOptions(options.config));
  await installRateLimits(app, options.config);
  installMetrics(app, options.config, options.poolStats);
  const changes = options.changes;
  if (changes) {
    // A route that ends tokens answers only once this instance's caches know: the client's next
    // request, to this instance too, is refused (`revokes: 'refused'`: only when it answered 4xx,
    // as the token endpoint does when a reused code or refresh token revokes a grant).
    // Synchronous (with `done`): it runs on every request, and only a revoking one waits.
    app.addHook('onSend', (request, reply, payload, done) => {
      const revokes = request.routeOptions.config?.revokes;
      const refused =
        revokes === 'refused' &&
        reply.statusCode >= 400 &&
        reply.statusCode < 500 &&
        !POLLING_ANSWERS.has(answeredError(request)?.error ?? '');
      if (revokes === true || refused) {
        changes.sync(options.db).then(() => done(null, payload), done);
        return;
      }
      done(null, payload);
    });
  }
  // Before the page guards: theirs run first on a route, so a form's CSRF token is checked first.
  installConsoleGuard(app, deps);
  installPageGuards(app, deps);
  installAfterResponse(app);
  await app.register(platformRoutes, deps);
  await app.register(accountRoutes, deps);
  await app.register(passkeyRoutes, deps);
  await app.register(authorizeRoutes, deps);
  await app.register(logoutRoutes, deps);
  await app.register(oauthRoutes, deps);
  await app.register(registrationRoutes, deps);
  await app.register(oidcRoutes, deps);
  await app.register(profileRoutes, deps);
  await app.register(searchRoutes, deps);
  await app.register(premiumRoutes, deps);
  await app.register(walletRoutes, deps);
  await app.register(mobileRoutes, deps);
  await app.register(consoleRoutes, deps);
  await app.register(catalogueRoutes, { registry });
  return app;
}
