import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { saveScreenshot, screenshotsWanted } from './helpers/page-checks.js';

/*
 * The browser tests photograph the pages for docs/screenshots/, tracked files: a run writes them
 * only when asked (UPDATE_SCREENSHOTS=1), so that running the tests leaves the checkout unchanged.
 * No browser here: a stand-in page answers the screenshot.
 */

let folder: string;
const png = Buffer.from('89504e470d0a1a0a', 'hex');
const page = () => ({ screenshot: vi.fn(async () => png) });

beforeEach(async () => {
  folder = await mkdtemp(path.join(os.tmpdir(), 'idp-screenshots-'));
});
afterEach(() => rm(folder, { recursive: true, force: true }));

describe('screenshots of the pages', () => {
  it('are written only with UPDATE_SCREENSHOTS=1', () => {
    expect(screenshotsWanted({})).toBe(false);
    expect(screenshotsWanted({ UPDATE_SCREENSHOTS: '' })).toBe(false);
    expect(screenshotsWanted({ UPDATE_SCREENSHOTS: '0' })).toBe(false);
    expect(screenshotsWanted({ UPDATE_SCREENSHOTS: 'true' })).toBe(false);
    expect(screenshotsWanted({ UPDATE_SCREENSHOTS: '1' })).toBe(true);
  });

  it('are neither taken nor written when not asked for', async () => {
    const shot = page();
    expect(
      await saveScreenshot(shot, 'signin-en-phone', { fullPage: true }, { env: {}, folder }),
    ).toBeUndefined();
    expect(shot.screenshot).not.toHaveBeenCalled();
    expect(await readdir(folder)).toEqual([]);
  });

  it('are written as <name>.png when asked for', async () => {
    const shot = page();
    await saveScreenshot(
      shot,
      'signin-en-phone',
      { fullPage: true },
      { env: { UPDATE_SCREENSHOTS: '1' }, folder },
    );
    expect(shot.screenshot).toHaveBeenCalledWith({ animations: 'disabled', caret: 'hide', fullPage: true });
    expect(await readdir(folder)).toEqual(['signin-en-phone.png']);
    expect(await readFile(path.join(folder, 'signin-en-phone.png'))).toEqual(png);
  });
});
