import type { RouteOptions } from 'fastify';
import FindMyWay, { type HTTPMethod } from 'find-my-way';

/** Who may call a route, as the catalogue reports it. */
export type RouteAuth = 'public' | 'bearer' | 'client' | 'browser' | 'mobile';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Required on every route: the catalogue lists it and later plugins (rate limits) key on it. */
    auth?: RouteAuth;
    /** Required on every route: one line for the catalogue. */
    description?: string;
    /** 'signin': counted under the per-IP sign-in limit (RATE_LIMIT_SIGNIN_PER_MIN); every form POST declares it. */
    rateLimit?: 'signin';
    /** The route checks the password of the account named in its body: that account is rate limited too. */
    checksPassword?: boolean;
    /** The route may end tokens: it answers once the instance's caches know (app.ts; 'refused': only on a 4xx). */
    revokes?: boolean | 'refused';
  }
}

export interface CatalogueEntry {
  method: string;
  path: string;
  auth: RouteAuth;
  description: string;
}

/**
 * Learns every route as Fastify registers it (the `onRoute` hook), so that the catalogue is built
 * from the routes themselves, never from a hand-kept list, and a known path asked with another
 * method can be answered 405 with the right `Allow` header.
 */
export class RouteRegistry {
  private readonly entries: CatalogueEntry[] = [];
  private readonly router = FindMyWay();

  /** The `onRoute` hook. Throws at startup for a route without `auth` and `description`. */
  readonly onRoute = (route: RouteOptions): void => {
    const methods = [route.method].flat();
    const { auth, description, rateLimit } = route.config ?? {};
    if (!auth || !description) {
      throw new Error(
        `route ${methods.join(',')} ${route.url} must declare config.auth and config.description`,
      );
    }
    // A form can be posted by any page on the web: none may escape the sign-in limit by omission.
    if (auth === 'browser' && methods.includes('POST') && rateLimit !== 'signin') {
      throw new Error(`form route POST ${route.url} must declare config.rateLimit: 'signin'`);
    }
    for (const method of methods) {
      this.router.on(method as HTTPMethod, route.url, () => undefined);
      // HEAD routes are Fastify's automatic twins of GET routes; the catalogue lists the GET.
      if (method !== 'HEAD') this.entries.push({ method, path: route.url, auth, description });
    }
  };

  /** The methods registered for a concrete path (empty when the path is unknown). */
  allowedMethods(path: string): string[] {
    const methods = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const;
    return methods.filter((method) => this.router.find(method, path) !== null);
  }

  /** Every route, sorted by path then method. */
  list(): readonly CatalogueEntry[] {
    return [...this.entries].sort((a, b) => a.path.localeCompare(b.path) || a.method.localeCompare(b.method));
  }
}
