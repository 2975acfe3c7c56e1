import type { Deps } from '../context.js';
import type { Client } from '../modules/clients/client.js';
import { restorePendingRequest } from '../modules/oauth/authorize/pending.service.js';

/** The app that sent a person to a page: its name, and its logo with the origin the page's CSP must admit. */
export interface RequestingApp {
  name: string;
  logo: { src: string; origin: string } | null;
  /** The request's redirect_uri: where the page's form may end (the CSP's form-action). */
  redirectUri: string | null;
}

/** The app as a page shows it; a logo that is not a valid http(s) URL (it was checked when registered) is left out. */
export function appOf(
  client: Pick<Client, 'name' | 'logoUri'>,
  redirectUri: string | null = null,
): RequestingApp {
  let logo: RequestingApp['logo'] = null;
  if (client.logoUri) {
    try {
      const url = new URL(client.logoUri);
      if (url.protocol === 'https:' || url.protocol === 'http:') logo = { src: url.href, origin: url.origin };
    } catch {
      logo = null;
    }
  }
  return { name: client.name, logo, redirectUri };
}

/**
 * The app whose authorization request this sign-in is part of, so that the page can say where the
 * person is going (as Google's "to continue to …"); null without a request, or when it expired.
 */
export async function requestingApp(
  deps: Deps,
  requestId: string | undefined,
): Promise<RequestingApp | null> {
  if (!requestId) return null;
  const restored = await restorePendingRequest(deps.db, deps.ctx, requestId);
  return restored ? appOf(restored.request.client, restored.request.redirectUri) : null;
}

/** The CSP img-src origins a page showing this app needs. */
export function appImageOrigins(app: RequestingApp | null): string[] {
  return app?.logo ? [app.logo.origin] : [];
}

/**
 * The CSP form-action targets of a page of this app's request: its redirect_uri, where a sign-in
 * that resumes the request (consent remembered) or the consent form's answer is redirected.
 */
export function appFormTargets(app: RequestingApp | null): string[] {
  return app?.redirectUri ? [app.redirectUri] : [];
}
