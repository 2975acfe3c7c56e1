import { describe, expect, it } from 'vitest';
import { escapeHtml } from '../../src/lib/html.js';

describe('escapeHtml', () => {
  it('escapes the five characters that matter in character data and quoted attributes, and only them', () => {
    expect(escapeHtml(`<a href="x" title='y'>Tom & Jerry</a> — ok`)).toBe(
      '&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;Tom &amp; Jerry&lt;/a&gt; — ok',
    );
    // A link's query keeps its meaning once the browser unescapes it.
    expect(escapeHtml('https://id.example/p?token=pr_a&lang=ru')).toBe(
      'https://id.example/p?token=pr_a&amp;lang=ru',
    );
  });
});
