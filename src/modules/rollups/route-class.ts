/**
 * The classes the console's error charts group answers by: a bounded set, derived from the route
 * pattern (never the raw URL, which anyone can vary), so the rollups cannot grow a key per path.
 */
export const ROUTE_CLASSES = ['oauth', 'api', 'mobile', 'wallet', 'console', 'pages', 'other'] as const;
export type RouteClass = (typeof ROUTE_CLASSES)[number];

/** The class of a route pattern (`request.routeOptions.url`); no pattern (nothing matched): `other`. */
export function routeClassOf(pattern: string | undefined): RouteClass {
  if (pattern === undefined) return 'other';
  if (pattern.startsWith('/api/v1/oauth/') || pattern.startsWith('/.well-known/')) return 'oauth';
  if (pattern.startsWith('/api/v1/mobile/')) return 'mobile';
  if (pattern.startsWith('/api/v1/wallet/')) return 'wallet';
  if (pattern.startsWith('/api/')) return 'api';
  if (pattern === '/admin' || pattern.startsWith('/admin/')) return 'console';
  if (pattern.startsWith('/assets/') || pattern.startsWith('/health/') || pattern === '/metrics')
    return 'other';
  return 'pages';
}
