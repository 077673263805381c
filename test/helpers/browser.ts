import { chromium, type Browser } from 'playwright-core';
import { ensurePackage } from '../../scripts/ensure-package.ts';

// Flags the machine needs: no sandbox as root, and no background connections (the closed
// network refuses them, and Chromium retries them at every start).
const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

let executablePath: string | undefined;

/** Path of Debian's chromium (SVC_CHROMIUM_PATH overrides), installed by scripts/ensure-package.sh the first time it is missing. */
export function chromiumPath(): string {
  executablePath ??= process.env.SVC_CHROMIUM_PATH;
  executablePath ??= ensurePackage('chromium', 'chromium', 'the browser tests');
  return executablePath;
}

/**
 * Launches headless chromium (playwright gives each launch a fresh temporary profile and removes
 * it on close). Tests own the returned browser and must close it.
 */
export async function launchBrowser(): Promise<Browser> {
  return chromium.launch({ executablePath: chromiumPath(), headless: true, args: CHROMIUM_ARGS });
}
