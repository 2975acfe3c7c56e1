import { describe, expect, it } from 'vitest';
import { open, seal } from '../../src/lib/sealed-secret.js';

const CURRENT = 'c'.repeat(32);
const FORMER = 'f'.repeat(32);

describe('sealed secrets', () => {
  it('opens what it sealed, and the sealed text does not hold the plain text', () => {
    const sealed = seal('JBSWY3DPEHPK3PXP', CURRENT, 'totp');
    expect(sealed).not.toContain('JBSWY3DPEHPK3PXP');
    expect(sealed).toMatch(/^v1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
    expect(open(sealed, [CURRENT], 'totp')).toBe('JBSWY3DPEHPK3PXP');
  });

  it('seals the same text differently each time (a fresh nonce)', () => {
    expect(seal('same', CURRENT, 'totp')).not.toBe(seal('same', CURRENT, 'totp'));
  });

  it('opens with a former secret during a rotation', () => {
    const sealed = seal('key', FORMER, 'totp');
    expect(open(sealed, [CURRENT, FORMER], 'totp')).toBe('key');
    expect(open(sealed, [CURRENT], 'totp')).toBeNull();
  });

  it('refuses another purpose, a changed value and garbage', () => {
    const sealed = seal('key', CURRENT, 'totp');
    expect(open(sealed, [CURRENT], 'other')).toBeNull();
    const [v, nonce, body] = sealed.split('.') as [string, string, string];
    const flipped = Buffer.from(body, 'base64url');
    flipped[0] = (flipped[0] ?? 0) ^ 1;
    expect(open(`${v}.${nonce}.${flipped.toString('base64url')}`, [CURRENT], 'totp')).toBeNull();
    expect(open('v1.x.y', [CURRENT], 'totp')).toBeNull();
    expect(open('nonsense', [CURRENT], 'totp')).toBeNull();
  });
});
