/** The client credentials of an `Authorization: Basic` header. */
export interface BasicCredentials {
  clientId: string;
  clientSecret: string;
}

/**
 * Decodes `Authorization: Basic` client credentials: base64 of `client_id:client_secret`, each
 * form-urlencoded first (RFC 6749 §2.3.1 and Appendix B). Undefined when the header is absent or of
 * another scheme; `'malformed'` when it is Basic but not such credentials.
 */
export function decodeBasicCredentials(
  header: string | undefined,
): BasicCredentials | 'malformed' | undefined {
  if (header === undefined || !/^basic /i.test(header)) return undefined;
  const match = /^Basic +([A-Za-z0-9+/=._~-]+) *$/i.exec(header);
  if (!match?.[1]) return 'malformed';
  const decoded = Buffer.from(match[1], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon === -1) return 'malformed';
  const formDecode = (value: string) => decodeURIComponent(value.replace(/\+/g, ' '));
  try {
    return {
      clientId: formDecode(decoded.slice(0, colon)),
      clientSecret: formDecode(decoded.slice(colon + 1)),
    };
  } catch {
    return 'malformed';
  }
}
