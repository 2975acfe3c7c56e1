import { BlockList, isIP } from 'node:net';
import { z } from 'zod';

const seconds = (min: number, max: number) =>
  z
    .string()
    .trim()
    .regex(/^\d{1,9}$/, 'must be a whole number of seconds')
    .transform(Number)
    .refine((value) => value >= min && value <= max, `must be from ${min} to ${max}`);

/** An address as the allow-list compares it: an IPv4-mapped IPv6 address (`::ffff:10.0.0.1`) is its IPv4 one. */
export function plainAddress(address: string): string {
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(address);
  return mapped ? (mapped[1] as string) : address;
}

/** `ADMIN_ALLOWED_IPS` parsed: the addresses and CIDR blocks the console answers, or null for everywhere. */
export type AddressList = { allows(address: string): boolean; entries: readonly string[] } | null;

const addressList = z
  .string()
  .trim()
  .transform((value, ctx): AddressList => {
    if (value === '') return null;
    const entries = value.split(',').map((entry) => entry.trim());
    const list = new BlockList();
    for (const entry of entries) {
      const [address = '', bits] = entry.split('/');
      const family = isIP(address);
      const prefix = bits === undefined ? undefined : /^\d{1,3}$/.test(bits) ? Number(bits) : Number.NaN;
      const limit = family === 6 ? 128 : 32;
      if (family === 0 || (prefix !== undefined && !(prefix >= 0 && prefix <= limit))) {
        ctx.addIssue({
          code: 'custom',
          message: `must be addresses or CIDR blocks, comma-separated; "${entry}" is neither`,
        });
        return z.NEVER;
      }
      const type = family === 6 ? 'ipv6' : 'ipv4';
      if (prefix === undefined) list.addAddress(address, type);
      else list.addSubnet(address, prefix, type);
    }
    return {
      entries,
      allows: (given) => {
        const plain = plainAddress(given);
        const family = isIP(plain);
        return family !== 0 && list.check(plain, family === 6 ? 'ipv6' : 'ipv4');
      },
    };
  });

/** The operators' console settings (docs/operating.md "The console"), part of src/config.ts's `settings`. */
export const consoleSettings = {
  ADMIN_ALLOWED_IPS: addressList
    .optional()
    .transform((value) => value ?? null)
    .describe(
      'Where the console (`/admin`) answers from: addresses and CIDR blocks, comma-separated (`10.0.0.0/8,192.0.2.7`), as the service sees them (after `TRUST_PROXY`). Elsewhere every console path answers 404. Unset: everywhere.',
    ),
  ADMIN_SESSION_TTL_SECONDS: seconds(60, 86_400)
    .default(3600)
    .describe(
      'How long a console session lasts from entering with a second factor (1 hour); it is separate from the account session and ends with it.',
    ),
  ADMIN_REAUTH_MAX_AGE_SECONDS: seconds(30, 3600)
    .default(300)
    .describe(
      'How recent the second-factor proof of a console session must be for a destructive action (disable, delete, credit, rotate…); older, the console asks for it again (5 minutes).',
    ),
};
