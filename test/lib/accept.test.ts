import { describe, expect, it } from 'vitest';
import { prefersHtml } from '../../src/lib/accept.js';

describe('prefersHtml', () => {
  it('is true for what browsers send when they open a page', () => {
    // Chromium and Firefox navigations.
    expect(
      prefersHtml(
        'text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,image/apng,*/*;q=0.8,application/signed-exchange;v=b3;q=0.7',
      ),
    ).toBe(true);
    expect(prefersHtml('text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8')).toBe(true);
    expect(prefersHtml('text/html')).toBe(true);
    expect(prefersHtml('TEXT/HTML; charset=utf-8')).toBe(true);
    expect(prefersHtml('application/json;q=0.5, text/*')).toBe(true);
  });

  it('is false for API clients: JSON asked for, anything accepted, or no Accept', () => {
    expect(prefersHtml(undefined)).toBe(false);
    expect(prefersHtml('')).toBe(false);
    expect(prefersHtml('*/*')).toBe(false);
    expect(prefersHtml('application/json')).toBe(false);
    expect(prefersHtml('application/json, text/plain, */*')).toBe(false);
    expect(prefersHtml('text/html;q=0.5, application/json')).toBe(false);
    expect(prefersHtml('text/html, application/json')).toBe(false);
    expect(prefersHtml('text/html;q=0')).toBe(false);
    expect(prefersHtml('image/png, garbage, ;;;')).toBe(false);
  });
});
