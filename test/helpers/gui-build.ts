import { execFileSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Builds gui/dist when it is missing or older than its sources (npm install's `prepare` usually has). */
export function ensureGuiBuilt(): void {
  execFileSync(process.execPath, [join(import.meta.dirname, '../../scripts/build-gui.ts'), '--if-stale'], { stdio: ['ignore', 'ignore', 'inherit'], timeout: 300_000 });
}

/**
 * Where a console test writes its screenshot `name`: docs/gui-<name>.png (shown by docs/gui.md)
 * when SVC_UPDATE_SCREENSHOTS=1, else the temporary directory, so a test run leaves the tree as it was.
 */
export function screenshotPath(name: string): string {
  const dir = process.env.SVC_UPDATE_SCREENSHOTS === '1' ? join(import.meta.dirname, '../../docs') : tmpdir();
  return join(dir, `gui-${name}.png`);
}
