/** Absolute http(s) links in a text part, as the fallback logs them. */
export function linksIn(text: string): string[] {
  return text.match(/https?:\/\/[^\s<>"')\]]+/g) ?? [];
}
