import unhomoglyph from 'unhomoglyph';

/**
 * The key under which two usernames count as the same: the confusable skeleton of Unicode TS #39
 * §4 (each character mapped by confusables.txt, as `unhomoglyph` ships it), lower-cased. `aIice`
 * and `alice` (capital I for l), `rnary` and `mary`, `b0b` and `bob` share one, as do case variants.
 * Usernames are ASCII, so the NFD steps of the skeleton change nothing.
 */
export function usernameSkeleton(username: string): string {
  return unhomoglyph(username).toLowerCase();
}
