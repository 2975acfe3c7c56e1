import type { FastifyInstance, FastifyReply, FastifyRequest, preHandlerAsyncHookHandler } from 'fastify';
import type { Deps } from '../../context.js';
import { RequestValues } from '../../http/request-values.js';
import { ApiError, NotFound } from '../../lib/errors.js';
import { safeReturnPath } from '../../lib/return-to.js';
import { type ConsoleSessionRecord, recentlyProved } from '../../modules/operators/console-access.service.js';
import type { OperatorActor } from '../../modules/operators/operator-audit.js';
import { findOperator } from '../../modules/operators/operators.repository.js';
import { type ConsoleCapability, type ConsoleRole, roleCan } from '../../modules/operators/roles.js';
import { PageError } from '../pages.js';
import { type BrowserSession, loadSession } from '../session.js';
import {
  CONSOLE_ENTER_PATH,
  CONSOLE_PATH,
  CONSOLE_REAUTH_PATH,
  loadConsoleSession,
} from './console-session.js';

/**
 * Who may call a console route: `{ can }` names the capability its role must grant
 * (src/modules/operators/roles.ts), `destructive` asks for a recent second-factor proof, and
 * `{ entry: true }` marks the pages that open a console session (an operator's account session
 * is enough there).
 */
export type ConsoleAccess = { can: ConsoleCapability; destructive?: true } | { entry: true };

declare module 'fastify' {
  interface FastifyContextConfig {
    /** A console route: who may call it (src/web/console/console-guard.ts). */
    console?: ConsoleAccess;
  }
  interface FastifyInstance {
    /** Every console route with its declaration, in the order they were added: for the role tests and the docs. */
    consoleRoutes: ReadonlyArray<{ method: string; url: string; access: ConsoleAccess }>;
  }
}

/** The operator of a console request. */
export interface Operator {
  userId: number;
  username: string;
  role: ConsoleRole;
  account: BrowserSession;
  /** Undefined only on the entry routes, before a console session exists. */
  session?: ConsoleSessionRecord;
}

const operators = new RequestValues<Operator>('the console guard (config.console)');

/** The operator of a route declared `console`. */
export function requiredOperator(request: FastifyRequest): Operator {
  return operators.of(request);
}

/** The operator as the audit log records a console action. */
export function operatorActor(request: FastifyRequest): OperatorActor {
  const { userId, username, role } = operators.of(request);
  return { userId, username, role, ip: request.ip ?? null };
}

function isJson(request: FastifyRequest): boolean {
  return (request.headers['content-type'] ?? '').startsWith('application/json');
}

/** Where a refused request returns after signing in or proving: the page itself, or the form's page. */
function comeBackTo(request: FastifyRequest): string {
  if (request.method === 'GET') return safeReturnPath(request.url) ?? CONSOLE_PATH;
  return safeReturnPath(request.routeOptions.config.switchBase?.(request)) ?? CONSOLE_PATH;
}

function sendTo(request: FastifyRequest, reply: FastifyReply, path: string, code: string): FastifyReply {
  const to = `${path}?return_to=${encodeURIComponent(comeBackTo(request))}`;
  if (isJson(request)) throw new ApiError(401, code, `Go to ${to} first.`);
  return reply.redirect(to, request.method === 'GET' ? 302 : 303);
}

/**
 * Enforces every console route's one declaration (`config.console`), in this order: the address
 * (ADMIN_ALLOWED_IPS: elsewhere the console does not exist, 404), a signed-in account (else the
 * sign-in page), a console role (else 403), a console session proved with a second factor (else
 * the entry page), the role's right to the route (else 403), and for a destructive action a proof
 * within ADMIN_REAUTH_MAX_AGE_SECONDS (else the re-authentication page; the form changes nothing).
 * Installed before the page guards, so it runs after their CSRF check.
 */
export function installConsoleGuard(app: FastifyInstance, deps: Deps): void {
  const { config } = deps.ctx;
  const guard: preHandlerAsyncHookHandler = async (request, reply) => {
    const access = request.routeOptions.config.console as ConsoleAccess;
    if (config.ADMIN_ALLOWED_IPS && !config.ADMIN_ALLOWED_IPS.allows(request.ip)) throw new NotFound();
    const account = await loadSession(request, deps);
    if (!account) return sendTo(request, reply, '/signin', 'login_required');
    // One query: the role with the account's username (none for a disabled account).
    const found = await findOperator(deps.db, account.userId);
    if (!found) throw new PageError(403, 'console_forbidden');
    const { role, username } = found;
    const operator: Operator = { userId: account.userId, username, role, account };
    if ('entry' in access) {
      operators.set(request, operator);
      return;
    }
    const session = await loadConsoleSession(request, deps, account);
    if (!session) return sendTo(request, reply, CONSOLE_ENTER_PATH, 'console_session_required');
    if (!roleCan(role, access.can)) throw new PageError(403, 'console_forbidden');
    if (access.destructive && !recentlyProved(session, deps.ctx))
      return sendTo(request, reply, CONSOLE_REAUTH_PATH, 'reauthentication_required');
    operators.set(request, { ...operator, session });
  };
  const declared: Array<{ method: string; url: string; access: ConsoleAccess }> = [];
  app.decorate('consoleRoutes', declared);
  app.addHook('onRoute', (route) => {
    if (!route.config?.console) return;
    for (const method of [route.method].flat())
      if (method !== 'HEAD') declared.push({ method, url: route.url, access: route.config.console });
    route.preHandler = [guard, ...[route.preHandler ?? []].flat()];
  });
}
