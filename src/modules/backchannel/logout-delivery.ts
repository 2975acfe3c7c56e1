import { lookup as dnsLookup } from 'node:dns/promises';
import http from 'node:http';
import https from 'node:https';
import { BlockList, isIP, type LookupFunction } from 'node:net';

/** A resolved address, as `dns.lookup` answers with `all: true`. */
export interface ResolvedAddress {
  address: string;
  family: number;
}

/** Resolves a host name to its addresses (injected by tests; `dns.lookup` otherwise). */
export type Resolver = (hostname: string) => Promise<ResolvedAddress[]>;

export const systemResolver: Resolver = (hostname) => dnsLookup(hostname, { all: true, verbatim: true });

export interface DeliveryOptions {
  /** The whole delivery, from the name's resolution to the response's end. */
  timeoutMs: number;
  /** The most of a response body read; the rest is dropped with the connection. */
  maxResponseBytes: number;
  resolve: Resolver;
}

/** How a delivery went: `ok` for 200 or 204 (Back-Channel Logout 1.0 §2.8); `error` one short line. */
export type DeliveryResult = { ok: true; status: number } | { ok: false; error: string };

/** Addresses no logout token goes to, unless the URI's host is loopback. */
const NOT_PUBLIC = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8], // "this network", the unspecified address
  ['10.0.0.0', 8],
  ['100.64.0.0', 10], // CGNAT (RFC 6598)
  ['127.0.0.0', 8],
  ['169.254.0.0', 16], // link-local
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, and the broadcast address
] as const)
  NOT_PUBLIC.addSubnet(network, prefix, 'ipv4');
for (const [network, prefix] of [
  ['::', 128], // unspecified
  ['::1', 128],
  ['64:ff9b::', 96], // NAT64, likewise
  ['64:ff9b:1::', 48],
  ['100::', 64],
  ['2001:db8::', 32],
  ['2002::', 16], // 6to4, which embeds an IPv4 address
  ['fc00::', 7], // unique-local
  ['fe80::', 10], // link-local
  ['fec0::', 10],
  ['ff00::', 8], // multicast
] as const)
  NOT_PUBLIC.addSubnet(network, prefix, 'ipv6');

// IPv4-mapped IPv6 addresses are refused whole, in a list of their own: a BlockList checks an IPv4
// address against its IPv6 rules in mapped form, so `::ffff:0:0/96` above would match every one.
const IPV4_MAPPED = new BlockList();
IPV4_MAPPED.addSubnet('::ffff:0:0', 96, 'ipv6');

const LOOPBACK = new BlockList();
LOOPBACK.addSubnet('127.0.0.0', 8, 'ipv4');
LOOPBACK.addAddress('::1', 'ipv6');

const LOOPBACK_NAMES = new Set(['localhost', '127.0.0.1', '::1']);

const familyName = (family: number) => (family === 6 ? 'ipv6' : 'ipv4');

/**
 * Whether a logout token for a URI on `hostname` may go to `address`: a loopback URI only ever
 * to loopback, any other only to a public address (no private, link-local, unique-local, CGNAT,
 * multicast, unspecified or reserved one: the provider must not be a way into its own network).
 */
export function addressAllowed(hostname: string, address: ResolvedAddress): boolean {
  const type = familyName(address.family);
  return LOOPBACK_NAMES.has(hostname)
    ? LOOPBACK.check(address.address, type)
    : !NOT_PUBLIC.check(address.address, type) &&
        !(type === 'ipv6' && IPV4_MAPPED.check(address.address, type));
}

/** The checked addresses of the URI's host: an IP literal as is, a name resolved once, here. */
async function checkedAddress(url: URL, resolve: Resolver): Promise<ResolvedAddress> {
  const hostname = url.hostname.replace(/^\[(.*)\]$/, '$1');
  const literal = isIP(hostname);
  const addresses = literal ? [{ address: hostname, family: literal }] : await resolve(hostname);
  if (addresses.length === 0) throw new Error(`${hostname} has no address`);
  const allowed = addresses.find((address) => addressAllowed(hostname, address));
  if (!allowed) {
    throw new Error(
      `refused: ${hostname} resolves to ${addresses.map((a) => a.address).join(', ')}, not an address a logout token may go to`,
    );
  }
  return allowed;
}

/**
 * POSTs a logout token (Back-Channel Logout 1.0 §2.5): form-encoded `logout_token`, never
 * following a redirect (a 3xx is a failure). The host is resolved here and the connection made
 * to the checked address only (the `lookup` answers it), so a DNS answer that changes between the
 * check and the connection (rebinding) cannot lead elsewhere; TLS still verifies the URI's name.
 */
export async function deliverLogoutToken(
  uri: string,
  logoutToken: string,
  options: DeliveryOptions,
): Promise<DeliveryResult> {
  const signal = AbortSignal.timeout(options.timeoutMs);
  let url: URL;
  let target: ResolvedAddress;
  const timedOut = new Promise<never>((_, reject) =>
    signal.addEventListener('abort', () => reject(new Error('timed out resolving the host')), { once: true }),
  );
  // Handled here too: when the resolution wins the race, the later timeout rejects into nothing.
  timedOut.catch(() => undefined);
  try {
    url = new URL(uri);
    target = await Promise.race([checkedAddress(url, options.resolve), timedOut]);
  } catch (error) {
    return { ok: false, error: error instanceof Error ? error.message : String(error) };
  }
  const pinned: LookupFunction = (_hostname, lookupOptions, callback) => {
    if (lookupOptions.all) callback(null, [target]);
    else
      (callback as (error: null, address: string, family: number) => void)(
        null,
        target.address,
        target.family,
      );
  };
  const body = new URLSearchParams({ logout_token: logoutToken }).toString();
  return new Promise<DeliveryResult>((resolve) => {
    const client = url.protocol === 'https:' ? https : http;
    const request = client.request(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        'content-length': Buffer.byteLength(body),
        'cache-control': 'no-store',
      },
      lookup: pinned,
      agent: false,
      signal,
    });
    request.on('error', (error: NodeJS.ErrnoException) =>
      resolve({
        ok: false,
        error:
          error.name === 'AbortError'
            ? `timed out after ${options.timeoutMs} ms`
            : (error.code ?? error.message),
      }),
    );
    request.on('response', (response) => {
      const status = response.statusCode ?? 0;
      let read = 0;
      const done = () => {
        if (status === 200 || status === 204) resolve({ ok: true, status });
        else
          resolve({
            ok: false,
            error: `HTTP ${status}${status >= 300 && status < 400 ? ' (redirects are not followed)' : ''}`,
          });
      };
      response.on('data', (chunk: Buffer) => {
        read += chunk.length;
        if (read > options.maxResponseBytes) {
          response.destroy();
          done();
        }
      });
      response.on('end', done);
      response.on('error', done);
    });
    request.end(body);
  });
}
