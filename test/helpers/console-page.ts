import type { Browser, Page } from 'playwright-core';
import { launchBrowser } from './browser.ts';
import { ensureGuiBuilt } from './gui-build.ts';
import { startTestStack, type TestStack } from './stack.ts';

/** A server stack and a headless browser's page for its console: what a console test opens first. */
export type ConsolePage = { stack: TestStack; browser: Browser; page: Page; close(): Promise<void> };

/**
 * Builds the console if stale, starts a stack with `options` and a browser with one 1280x900 page;
 * `close` stops the browser, then the stack. What started before a failure is stopped too.
 */
export async function openConsolePage(options: Parameters<typeof startTestStack>[0]): Promise<ConsolePage> {
  ensureGuiBuilt();
  const stack = await startTestStack(options);
  let browser: Browser | undefined;
  try {
    browser = await launchBrowser();
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    const opened = browser;
    return {
      stack,
      browser: opened,
      page,
      async close() {
        await opened.close();
        await stack.close();
      },
    };
  } catch (err) {
    await browser?.close();
    await stack.close();
    throw err;
  }
}
