/**
 * `idp demo`: a demo site and user for examples/site. A second run finds the same client (by name
 * and first redirect URI) and user; secrets are stored only as hashes, so each run issues a fresh
 * client_secret and sets the password again. Refused in production: the password is published here.
 */
export const DEMO = {
  clientName: 'Demo site',
  siteUrl: 'http://localhost:4000',
  /** The example site's default port, 4000; any other loopback port matches too (RFC 8252 §7.3). */
  redirectUris: ['http://localhost:4000/callback', 'http://127.0.0.1:4000/callback'],
  username: 'demo',
  password: 'demo-password',
  email: 'demo@example.com',
  displayName: 'Demo User',
  /** Coins credited once, when the demo user is created. */
  coins: 100,
} as const;

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
