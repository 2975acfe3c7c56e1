import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { readmePath, renderConfigReference, updatedReadme } from '../scripts/config-reference.js';
import { settings } from '../src/config.js';

describe('README configuration reference', () => {
  it('matches the settings of src/config.ts (run `npm run docs:config` after changing them)', () => {
    const readme = readFileSync(readmePath, 'utf8');
    expect(updatedReadme(readme)).toBe(readme);
  });

  it('documents every setting with its default', () => {
    const table = renderConfigReference();
    for (const name of Object.keys(settings)) expect(table).toContain(`| \`${name}\` |`);
    expect(table).toContain('| `PORT` | `3000` |');
    expect(table).toContain('| `DATA_DIR` | `./data` |');
    expect(table).toContain('| `RATE_LIMIT_SIGNIN_PER_MIN` | `10` |');
  });
});
