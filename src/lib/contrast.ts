/**
 * WCAG 2.2 contrast (§1.4.3 Contrast (Minimum), and the definitions of "relative luminance" and
 * "contrast ratio"): how an operator's accent colour is checked before any page uses it.
 */

/** A colour as `#rrggbb`. */
export const HEX_COLOR = /^#[0-9a-fA-F]{6}$/;

function channels(hex: string): [number, number, number] {
  return [1, 3, 5].map((at) => Number.parseInt(hex.slice(at, at + 2), 16)) as [number, number, number];
}

/** WCAG relative luminance of an sRGB `#rrggbb` colour: 0 for black, 1 for white. */
export function relativeLuminance(hex: string): number {
  const [r, g, b] = channels(hex).map((value) => {
    const c = value / 255;
    // The sRGB transfer function, with WCAG's threshold.
    return c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  }) as [number, number, number];
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}

/** (L1 + 0.05) / (L2 + 0.05), the lighter colour's luminance over the darker's: 1 to 21. */
export function contrastRatio(a: string, b: string): number {
  const [light, dark] = [relativeLuminance(a), relativeLuminance(b)].sort((x, y) => y - x) as [
    number,
    number,
  ];
  return (light + 0.05) / (dark + 0.05);
}

/** WCAG AA for normal text (§1.4.3). */
export const AA_TEXT_CONTRAST = 4.5;

/** The colour mixed with black by `amount` (0–1): a darker shade, for a hover state. */
export function darken(hex: string, amount: number): string {
  return `#${channels(hex)
    .map((value) =>
      Math.round(value * (1 - amount))
        .toString(16)
        .padStart(2, '0'),
    )
    .join('')}`;
}
