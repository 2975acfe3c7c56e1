import { describe, expect, it } from 'vitest';
import { maskEmail } from '../../src/lib/email-mask.js';

describe('maskEmail', () => {
  it('keeps the first character of the local part and the whole domain', () => {
    expect(maskEmail('new.address@example.com')).toBe('n…@example.com');
    expect(maskEmail('a@b.example')).toBe('a…@b.example');
  });

  it('cuts at the last @ and keeps a whole character outside the BMP', () => {
    expect(maskEmail('"a@b"@example.com')).toBe('"…@example.com');
    expect(maskEmail('😀x@example.com')).toBe('😀…@example.com');
  });

  it('shows nothing of a value that is no address', () => {
    expect(maskEmail('nobody')).toBe('…');
    expect(maskEmail('@example.com')).toBe('…');
  });
});
