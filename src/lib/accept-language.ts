/** One entry of `Accept-Language`: a language range and its weight. */
export interface LanguageRange {
  range: string;
  q: number;
}

/**
 * `Accept-Language` (RFC 9110 §12.5.4) as ranges by descending weight, in header order among
 * equal weights. Malformed entries and weights are skipped; `q=0` ("not acceptable") is dropped.
 */
export function parseAcceptLanguage(header: string | undefined): LanguageRange[] {
  if (!header) return [];
  const ranges: LanguageRange[] = [];
  for (const entry of header.slice(0, 1000).split(',')) {
    const [rawRange, ...parameters] = entry.split(';');
    const range = (rawRange ?? '').trim().toLowerCase();
    if (!/^(\*|[a-z]{1,8}(-[a-z0-9]{1,8})*)$/.test(range)) continue;
    let q = 1;
    let valid = true;
    for (const parameter of parameters) {
      const match = /^\s*q\s*=\s*(0(\.\d{0,3})?|1(\.0{0,3})?)\s*$/i.exec(parameter);
      if (match) q = Number(match[1]);
      else valid = false;
    }
    if (valid && q > 0) ranges.push({ range, q });
  }
  // Array.prototype.sort is stable: equal weights keep the header's order.
  return ranges.sort((a, b) => b.q - a.q);
}

/**
 * The best of `supported` for an `Accept-Language` header, by each range's primary subtag;
 * `fallback` for `*` or when none fits (the pages' language, a mail's language).
 */
export function bestLanguage<L extends string>(
  header: string | undefined,
  supported: readonly L[],
  fallback: L,
): L {
  for (const { range } of parseAcceptLanguage(header)) {
    if (range === '*') return fallback;
    const primary = range.split('-', 1)[0] as L;
    if (supported.includes(primary)) return primary;
  }
  return fallback;
}
