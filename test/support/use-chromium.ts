import { type Browser, chromium } from 'playwright-core';
import { afterAll, beforeAll } from 'vitest';

/** Debian's `chromium`, installed by the bootstrap; `NTERACT_CHROMIUM` names another. */
export const chromiumPath = process.env.NTERACT_CHROMIUM ?? '/usr/bin/chromium';

/**
 * One headless Chromium for a test file: launched before its tests, closed after them. Call at the
 * file's top level; the returned function gives the browser inside a test.
 */
export function useChromium(): () => Browser {
  let browser: Browser | undefined;
  beforeAll(async () => {
    browser = await chromium.launch({ executablePath: chromiumPath, args: ['--no-sandbox'] });
  });
  afterAll(async () => {
    await browser?.close();
  });
  return () => {
    if (!browser) throw new Error('Chromium is not launched yet: call the browser inside a test');
    return browser;
  };
}
