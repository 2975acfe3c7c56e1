import { existsSync } from 'node:fs';
import { type Browser, chromium, type Page } from 'playwright-core';

/**
 * Debian's Chromium (`apt-get install chromium`), driven by playwright-core. No browser is ever
 * downloaded: when this one is missing or does not start, the tests fail and say how to fix it.
 */
export const CHROMIUM_PATH = '/usr/bin/chromium';

const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

const HOW_TO_FIX =
  'Install it with `apt-get update && apt-get install -y chromium` (Debian), ' +
  'or set IDP_SKIP_BROWSER_TESTS=1 to skip the browser tests.';

/** Launches Chromium headless with a fresh profile (playwright creates and removes it). */
export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM_PATH)) {
    throw new Error(
      `The browser tests need Chromium at ${CHROMIUM_PATH}, which does not exist. ${HOW_TO_FIX}`,
    );
  }
  try {
    return await chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS, timeout: 30_000 });
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new Error(`Chromium at ${CHROMIUM_PATH} could not be launched. ${HOW_TO_FIX}\n${reason}`);
  }
}

/** One main-frame document response: every hop of a redirect chain, and the page it ends on. */
export interface DocumentResponse {
  url: string;
  status: number;
}

/** What a page did, recorded from the first navigation on. */
export interface PageLog {
  /** Every URL the page requested (documents, redirects, styles, icons…). */
  requests: string[];
  /** Main-frame document responses, in order. */
  documents: DocumentResponse[];
  /** console.error messages, CSP violations and failed resource loads as Chromium reports them. */
  consoleErrors: string[];
  /** Uncaught exceptions in the page. */
  pageErrors: string[];
  /** Requests that got no response at all (refused, aborted, blocked). */
  failedRequests: string[];
}

export function recordPage(page: Page): PageLog {
  const log: PageLog = { requests: [], documents: [], consoleErrors: [], pageErrors: [], failedRequests: [] };
  page.on('request', (request) => log.requests.push(request.url()));
  page.on('response', (response) => {
    const request = response.request();
    if (request.isNavigationRequest() && request.frame() === page.mainFrame()) {
      log.documents.push({ url: response.url(), status: response.status() });
    }
  });
  page.on('console', (message) => {
    if (message.type() !== 'error') return;
    // For a failed load, location() is the resource; the page is where it happened.
    const source = message.location().url;
    log.consoleErrors.push(`${message.text()} [${source || 'inline'}] (page ${page.url()})`);
  });
  page.on('pageerror', (error) => log.pageErrors.push(`${error.message} (at ${page.url()})`));
  page.on('requestfailed', (request) => {
    const error = request.failure()?.errorText ?? 'failed';
    // Leaving a page cancels its script's requests still under way (the sign-in page's passkey
    // autofill waits in the background): that is the navigation, not a failure. A blocked
    // resource fails with another error (net::ERR_BLOCKED_BY_CLIENT, csp) and is still counted.
    if (error === 'net::ERR_ABORTED' && request.resourceType() === 'fetch') return;
    log.failedRequests.push(`${request.url()}: ${error}`);
  });
  return log;
}
