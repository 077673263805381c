import { execFileSync } from 'node:child_process';
import { join } from 'node:path';

/** Builds gui/dist when it is missing or older than its sources (npm install's `prepare` usually has). */
export function ensureGuiBuilt(): void {
  execFileSync(process.execPath, [join(import.meta.dirname, '../../scripts/build-gui.ts'), '--if-stale'], { stdio: ['ignore', 'ignore', 'inherit'], timeout: 300_000 });
}
