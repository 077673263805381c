// Builds the web console (gui/) into gui/dist with Vite and reports its size, gzipped, per file
// and in all; fails when the whole passes GUI_MAX_GZIP_BYTES. `--if-stale` (npm install's
// `prepare`, `npm start`) skips the build when gui/dist is newer than every source file.
import { readdirSync, statSync } from 'node:fs';
import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { gzipSync } from 'node:zlib';

const GUI_DIR = join(import.meta.dirname, '../gui');
const DIST_DIR = join(GUI_DIR, 'dist');
/** The budget for everything a browser downloads, gzipped. */
const GUI_MAX_GZIP_BYTES = 400 * 1024;

const filesUnder = (dir: string): string[] =>
  readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .map((name) => join(dir, name))
    .filter((path) => statSync(path).isFile());

function newestSourceMs(): number {
  const sources = [...filesUnder(join(GUI_DIR, 'src')), join(GUI_DIR, 'index.html'), join(GUI_DIR, 'vite.config.ts')];
  return Math.max(...sources.map((path) => statSync(path).mtimeMs));
}

function builtMs(): number | null {
  try {
    return statSync(join(DIST_DIR, 'index.html')).mtimeMs;
  } catch {
    return null;
  }
}

/** Gzipped size of each built file, printed as a table; returns the total in bytes. */
function reportSize(): number {
  let total = 0;
  const rows: string[] = [];
  for (const path of filesUnder(DIST_DIR)) {
    const raw = readFileSync(path);
    const gz = gzipSync(raw, { level: 9 }).length;
    total += gz;
    rows.push(`  ${relative(DIST_DIR, path).padEnd(40)} ${(raw.length / 1024).toFixed(1).padStart(8)} KB ${(gz / 1024).toFixed(1).padStart(8)} KB gzip`);
  }
  process.stdout.write(`gui/dist:\n${rows.join('\n')}\n  total ${(total / 1024).toFixed(1)} KB gzipped (budget ${GUI_MAX_GZIP_BYTES / 1024} KB)\n`);
  return total;
}

const ifStale = process.argv.includes('--if-stale');
const built = builtMs();
if (ifStale && built !== null && built >= newestSourceMs()) {
  process.exit(0);
}
// Vite builds React's development bundle (double effects under StrictMode, jsxDEV) when the
// environment says NODE_ENV=test, as vitest's does for a test that rebuilds a stale console.
process.env.NODE_ENV = 'production';
let build: typeof import('vite').build;
try {
  ({ build } = await import('vite'));
} catch {
  // `npm install --omit=dev` has no Vite: the server then runs without the console and says so.
  process.stderr.write('vite is not installed (dev dependencies omitted?): the web console is not built\n');
  process.exit(ifStale ? 0 : 1);
}
await build({ configFile: join(GUI_DIR, 'vite.config.ts'), logLevel: 'warn' });
if (reportSize() > GUI_MAX_GZIP_BYTES) {
  process.stderr.write(`the web console is over its size budget of ${GUI_MAX_GZIP_BYTES / 1024} KB gzipped\n`);
  process.exit(1);
}
