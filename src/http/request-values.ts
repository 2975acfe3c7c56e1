import type { FastifyRequest } from 'fastify';

/**
 * What a route's hook established for a request (its client, token or actor), for the handler to
 * read. Keyed weakly, so it goes with the request, and no request is decorated for the few routes
 * that use one.
 */
export class RequestValues<T> extends WeakMap<FastifyRequest, T> {
  constructor(private readonly hook: string) {
    super();
  }

  /** @throws Error when the hook did not run on this route: a wiring mistake, so a 500. */
  of(request: FastifyRequest): T {
    const value = this.get(request);
    if (value === undefined)
      throw new Error(`${request.method} ${request.url}: ${this.hook} did not run on this route`);
    return value;
  }
}
