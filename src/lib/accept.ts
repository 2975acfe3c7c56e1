/**
 * Content negotiation by `Accept` (RFC 9110 §12.5.1), only as far as the service needs it: whether
 * a caller prefers an HTML page to a JSON body.
 */

interface MediaRange {
  type: string;
  subtype: string;
  q: number;
}

function parseAccept(header: string): MediaRange[] {
  const ranges: MediaRange[] = [];
  for (const entry of header.slice(0, 2000).split(',')) {
    const [range, ...parameters] = entry.split(';');
    const match = /^\s*([A-Za-z0-9!#$%&'*+.^_`|~-]+)\/([A-Za-z0-9!#$%&'*+.^_`|~-]+)\s*$/.exec(range ?? '');
    if (!match) continue;
    let q = 1;
    for (const parameter of parameters) {
      const weight = /^\s*q\s*=\s*(0(?:\.\d{0,3})?|1(?:\.0{0,3})?)\s*$/i.exec(parameter);
      if (weight) q = Number(weight[1]);
    }
    ranges.push({ type: (match[1] as string).toLowerCase(), subtype: (match[2] as string).toLowerCase(), q });
  }
  return ranges;
}

/** The weight `Accept` gives a media type: that of the most specific range matching it (RFC 9110 §12.5.1). */
function weightOf(ranges: readonly MediaRange[], type: string, subtype: string): number {
  let best: { specificity: number; q: number } | undefined;
  for (const range of ranges) {
    const specificity =
      range.type === type && range.subtype === subtype
        ? 2
        : range.type === type && range.subtype === '*'
          ? 1
          : range.type === '*' && range.subtype === '*'
            ? 0
            : -1;
    if (specificity >= 0 && (!best || specificity > best.specificity)) best = { specificity, q: range.q };
  }
  return best?.q ?? 0;
}

/**
 * Whether `Accept` ranks text/html above application/json: a browser's navigation does
 * (`text/html,…,*\/*;q=0.8`); an API client sending `application/json`, `*\/*` (curl) or no
 * `Accept` at all does not, and keeps getting JSON.
 */
export function prefersHtml(accept: string | undefined): boolean {
  if (!accept) return false;
  const ranges = parseAccept(accept);
  const html = weightOf(ranges, 'text', 'html');
  return html > 0 && html > weightOf(ranges, 'application', 'json');
}
