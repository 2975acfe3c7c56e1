import type { Deps } from '../../context.js';
import type { UpstreamKind } from '../../db/schema-upstream.js';
import { authorizationOrigins, discoverSoon } from '../../modules/upstream/upstream-client.js';
import { enabledProviders } from '../../modules/upstream/upstream-sign-in.service.js';
import type { Flow } from '../page-forms.js';

const DISCOVERY_WAIT_MS = 1000;

/** One "Continue with …" button: a form posting to `action` with the page's flow. */
export interface ProviderButton {
  name: string;
  kind: UpstreamKind;
  displayName: string;
  action: string;
}

/**
 * The buttons of the enabled providers for a page, and the origins its CSP's form-action must
 * admit for them. `actionOf` names the route each button posts to (sign-in, link, re-authenticate).
 */
export async function providerButtons(
  deps: Deps,
  actionOf: (name: string) => string = (name) => `/signin/providers/${name}`,
  only?: (name: string) => boolean,
): Promise<{ buttons: ProviderButton[]; formTargets: string[] }> {
  const providers = (await enabledProviders(deps.db)).filter((provider) => !only || only(provider.name));
  // At most a second, once an hour per provider: its authorization endpoint's origin, for form-action.
  const now = deps.ctx.clock.now().getTime();
  await Promise.all(providers.map((provider) => discoverSoon(provider, now, DISCOVERY_WAIT_MS)));
  return {
    buttons: providers.map((provider) => ({
      name: provider.name,
      kind: provider.kind,
      displayName: provider.displayName,
      action: actionOf(provider.name),
    })),
    formTargets: providers.flatMap(authorizationOrigins),
  };
}

/** The hidden fields that carry a page's flow through a button's form. */
export function flowHidden(flow: Flow): Array<[string, string]> {
  const fields: Array<[string, string]> = [];
  if (flow.requestId) fields.push(['request', flow.requestId]);
  if (flow.returnTo) fields.push(['return_to', flow.returnTo]);
  return fields;
}
