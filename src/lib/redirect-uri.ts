/**
 * Redirect URI rules at registration (RFC 6749 §3.1.2, RFC 8252 §7).
 * Matching at authorize time is exact, so what is registered here is exactly what may be used.
 */

const LOOPBACK_HOSTS = new Set(['127.0.0.1', '[::1]', 'localhost']);

/** Schemes that are never a redirect target, whatever the client. */
const FORBIDDEN_SCHEMES = new Set([
  'javascript:',
  'data:',
  'vbscript:',
  'file:',
  'blob:',
  'about:',
  'ftp:',
  'ws:',
  'wss:',
]);

export function isLoopbackHost(hostname: string): boolean {
  return LOOPBACK_HOSTS.has(hostname);
}

/** A private-use URI scheme of a native app (RFC 8252 §7.1), such as `com.example.app:/callback`. */
export function isCustomScheme(protocol: string): boolean {
  return protocol !== 'http:' && protocol !== 'https:' && /^[a-z][a-z0-9+.-]*:$/.test(protocol);
}

/** Why a URI cannot be registered as a redirect URI for a client with this site URL, or null when it can. */
export function redirectUriProblem(uri: string, siteUrl: string): string | null {
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return `redirect URI "${uri}" is not an absolute URI`;
  }
  if (uri.includes('#')) return `redirect URI "${uri}" must not contain a fragment (RFC 6749 §3.1.2)`;
  if (url.username || url.password) return `redirect URI "${uri}" must not contain credentials`;
  if (FORBIDDEN_SCHEMES.has(url.protocol)) return `redirect URI "${uri}" uses a forbidden scheme`;
  if (url.protocol === 'https:') return null;
  if (url.protocol === 'http:') {
    return isLoopbackHost(url.hostname)
      ? null
      : `redirect URI "${uri}" must use https (plain http is allowed on 127.0.0.1, [::1] and localhost only)`;
  }
  if (isCustomScheme(url.protocol)) {
    // docs/api.md, native applications: no custom scheme for a client whose site is an HTTPS address.
    return new URL(siteUrl).protocol === 'https:'
      ? `redirect URI "${uri}" uses a custom scheme, which is not supported for a client whose site_url is https; use an https redirect`
      : null;
  }
  return `redirect URI "${uri}" has an unsupported scheme`;
}

/**
 * Why a URI cannot be registered as a web address the provider sends a browser or a request to
 * (`what` names it in the text), or null when it can: absolute https, or http on a loopback host;
 * no fragment and no credentials.
 */
function webUriProblem(uri: string, what: string): string | null {
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return `${what} "${uri}" is not an absolute URI`;
  }
  if (uri.includes('#')) return `${what} "${uri}" must not contain a fragment`;
  if (url.username || url.password) return `${what} "${uri}" must not contain credentials`;
  if (url.protocol === 'https:' || (url.protocol === 'http:' && isLoopbackHost(url.hostname))) return null;
  return `${what} "${uri}" must use https (plain http is allowed on 127.0.0.1, [::1] and localhost only)`;
}

/**
 * Why a URI cannot be registered as a post-logout redirect URI, or null when it can
 * (docs/oauth.md): as for redirect URIs, but never a custom scheme (the logout page is left in a browser, not
 * handed back to a native app).
 */
export function postLogoutRedirectUriProblem(uri: string): string | null {
  return webUriProblem(uri, 'post-logout redirect URI');
}

/** `http://<loopback host>[:port]<rest>`, split without any normalization. */
const LOOPBACK_URI = /^http:\/\/(127\.0\.0\.1|\[::1\]|localhost)(?::(\d{1,5}))?([/?][^#]*)?$/;

/**
 * Whether a redirect_uri sent to authorize is one of the registered ones: an exact string match
 * (RFC 6749 §3.1.2.3; no normalization, so a trailing slash, case, dot segments, an added query or
 * a userinfo part never match), except that for an http loopback URI the port alone may differ
 * (RFC 8252 §7.3: native apps listen on an ephemeral port).
 */
export function redirectUriMatches(registered: readonly string[], requested: string): boolean {
  if (registered.includes(requested)) return true;
  const wanted = LOOPBACK_URI.exec(requested);
  // A port is 0–65535 (RFC 3986 §3.2.3 leaves it unbounded; TCP does not): `:99999` is no URI a
  // browser could be sent to, so it matches nothing.
  if (!wanted || Number(wanted[2] ?? 0) > 65535) return false;
  return registered.some((uri) => {
    const known = LOOPBACK_URI.exec(uri);
    return known !== null && known[1] === wanted[1] && (known[3] ?? '') === (wanted[3] ?? '');
  });
}

/**
 * Why a URI cannot be a client's logo (RFC 7591 §2 `logo_uri`), or null when it can: https, or
 * http on a loopback host for development (a page served over https will not load it: mixed
 * content), at most 2048 characters. The pages admit its origin to their CSP's img-src.
 */
export function logoUriProblem(uri: string): string | null {
  if (uri.length > 2048) return 'logo URI must be at most 2048 characters';
  return webUriProblem(uri, 'logo URI');
}

/**
 * Why a URI cannot be a client's back-channel logout URI, or null when it can (docs/oauth.md;
 * no fragment, Back-Channel Logout 1.0 §2.2). Where it may connect to is checked again at each
 * delivery, on the resolved address.
 */
export function backchannelLogoutUriProblem(uri: string): string | null {
  return webUriProblem(uri, 'back-channel logout URI');
}
