import { describe, expect, it } from 'vitest';
import { contrastRatio, darken, relativeLuminance } from '../../src/lib/contrast.js';

describe('WCAG contrast', () => {
  it('computes relative luminance and the contrast ratio as WCAG defines them', () => {
    expect(relativeLuminance('#000000')).toBe(0);
    expect(relativeLuminance('#ffffff')).toBe(1);
    expect(contrastRatio('#000000', '#FFFFFF')).toBe(21);
    expect(contrastRatio('#ffffff', '#000000')).toBe(21);
    expect(contrastRatio('#777777', '#777777')).toBe(1);
    // Known values: #767676 is the lightest grey with 4.5:1 on white, #777777 just misses it.
    expect(contrastRatio('#767676', '#ffffff')).toBeCloseTo(4.54, 2);
    expect(contrastRatio('#777777', '#ffffff')).toBeCloseTo(4.48, 2);
    // The pages' own accent on white.
    expect(contrastRatio('#1a56c4', '#ffffff')).toBeGreaterThan(4.5);
  });

  it('darkens a colour towards black', () => {
    expect(darken('#ffffff', 0.5)).toBe('#808080');
    expect(darken('#1a56c4', 0)).toBe('#1a56c4');
    expect(darken('#1a56c4', 1)).toBe('#000000');
  });
});
