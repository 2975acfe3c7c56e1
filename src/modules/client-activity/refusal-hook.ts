import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Deps } from '../../context.js';
import { answeredError } from '../../http/request-log.js';
import type { ApiError } from '../../lib/errors.js';
import { rollups } from '../rollups/rollup-recorder.js';
import { RefusalRate } from './refusal-rate.js';
import {
  isLoggedRefusal,
  type RefusalEndpoint,
  type RequestSeen,
  recordRefusal,
} from './refusals.service.js';

interface Seen extends RequestSeen {
  /** The client authenticated (token endpoint): its answer counts under its outcomes at once. */
  known: boolean;
}

const seenRequests = new WeakMap<FastifyRequest, Seen>();

/** The instance's bound on the log's writes (one per process, as the rollups are). */
const rate = new RefusalRate();

/** How the client of a request to a client endpoint authenticated (RFC 6749 §2.3.1). */
function authenticationOf(request: FastifyRequest, params: Readonly<Record<string, unknown>>) {
  if (request.headers.authorization !== undefined) return 'client_secret_basic' as const;
  return params.client_secret !== undefined ? ('client_secret_post' as const) : ('none' as const);
}

/**
 * Notes the client a request names, once it is identified (authorize) or presented (the client
 * endpoints): a refusal from then on goes into that application's log. Only a reference is kept;
 * the values are read if the request is refused.
 */
export function noteClientRequest(
  request: FastifyRequest,
  endpoint: RefusalEndpoint,
  clientId: string,
  params: Readonly<Record<string, unknown>>,
): void {
  const clientAuthentication = endpoint === 'authorize' ? undefined : authenticationOf(request, params);
  seenRequests.set(request, { endpoint, clientId, params, clientAuthentication, known: false });
}

/** The client of the noted request authenticated: its token endpoint answers count as its outcomes. */
export function noteClientKnown(request: FastifyRequest): void {
  const seen = seenRequests.get(request);
  if (seen) seen.known = true;
}

/**
 * The one place where refused requests reach their application's log, and token endpoint answers
 * its outcome counts: an onResponse hook of the routes it is installed on, so it runs once the
 * answer has gone. A success costs a map lookup (and at the token endpoint a count in memory); a
 * refusal one statement, started after the response, within the instance's rate (RefusalRate).
 * An invalid_client is counted only once its statement found the application, since anyone may
 * send one in any client_id's name.
 */
export function installRefusalLog(app: FastifyInstance, { db, ctx }: Deps): void {
  const logRefusal = (seen: Seen, error: ApiError) => {
    const at = ctx.clock.now();
    if (!rate.take(seen.clientId, at.getTime())) return;
    app.afterResponse.run('refused request log', async () => {
      const written = await recordRefusal(db, ctx, seen, error, at);
      if (written && seen.endpoint === 'token' && !seen.known)
        rollups.tokenRequest(seen.clientId, error.error);
    });
  };
  app.addHook('onResponse', (request, reply, done) => {
    const seen = seenRequests.get(request);
    if (seen !== undefined) {
      const error = answeredError(request);
      if (seen.endpoint === 'token' && seen.known) {
        rollups.tokenRequest(seen.clientId, reply.statusCode < 400 ? 'ok' : (error?.error ?? 'other'));
      }
      if (error !== undefined && isLoggedRefusal(error)) logRefusal(seen, error);
    }
    done();
  });
}
