/**
 * `idp demo`: a demo site and user for examples/site. A second run finds the same client (by name
 * and a loopback callback it registered, on whatever port) and user; secrets are stored only as
 * hashes, so each run issues a fresh client_secret and sets the password again. Refused in
 * production: the password is published here.
 */
export const DEMO = {
  clientName: 'Demo site',
  /** The example site's default port (its EXAMPLE_PORT); `idp demo --site-port` gives another. */
  sitePort: 4000,
  username: 'demo',
  password: 'demo-password',
  email: 'demo@example.com',
  displayName: 'Demo User',
  /** Coins credited once, when the demo user is created. */
  coins: 100,
} as const;

/**
 * The demo client's site on `port` of this machine: its address, and its callback on both loopback
 * names (a browser may be sent to either; RFC 8252 §7.3 lets the port of a loopback URI differ, but
 * the registered one says where the site is).
 */
export function demoSite(port: number): { siteUrl: string; redirectUris: string[] } {
  return {
    siteUrl: `http://localhost:${port}`,
    redirectUris: [`http://localhost:${port}/callback`, `http://127.0.0.1:${port}/callback`],
  };
}

/** A callback `idp demo` registers, on any port: how a later run finds its client again. */
export const DEMO_CALLBACK = /^http:\/\/(?:localhost|127\.0\.0\.1):\d+\/callback$/;

export interface DemoResult {
  issuer: string;
  discovery_url: string;
  client: {
    client_id: string;
    client_secret: string;
    name: string;
    site_url: string;
    redirect_uris: string[];
    wallet: boolean;
    created: boolean;
  };
  user: {
    id: number;
    username: string;
    password: string;
    email: string | null;
    display_name: string | null;
    created: boolean;
  };
}
