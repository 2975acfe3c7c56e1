/** Human-readable output of a command result: `key: value` lines, nested values indented. */
export function formatListing(value: unknown, indent = ''): string {
  if (Array.isArray(value)) {
    if (value.length === 0) return `${indent}(none)`;
    return value
      .map((item) =>
        item !== null && typeof item === 'object'
          ? `${indent}-\n${formatListing(item, `${indent}  `)}`
          : `${indent}- ${String(item)}`,
      )
      .join('\n');
  }
  if (value !== null && typeof value === 'object') {
    return Object.entries(value)
      .map(([key, item]) =>
        item !== null && typeof item === 'object'
          ? `${indent}${key}:\n${formatListing(item, `${indent}  `)}`
          : `${indent}${key}: ${item === null ? '-' : String(item)}`,
      )
      .join('\n');
  }
  return `${indent}${String(value)}`;
}
