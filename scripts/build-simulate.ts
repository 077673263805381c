// Builds the package export `svc-orchestrator/simulate` as JavaScript with declarations into
// dist/simulate: Node strips types only outside node_modules, so an installed copy of this
// package needs plain JavaScript for a test run by plain `node` (npm's `prepare` and `prepack`).
// The repository's own tests import the TypeScript source (the `svc-source` condition).
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = join(import.meta.dirname, '..');
const OUT_DIR = join(ROOT, 'dist/simulate');
const ENTRY = 'machines/simulate-playbook.ts';
// A relative import of a .ts file, as our sources (and tsc's declarations) write them.
const TS_SPECIFIER = /(from\s+|import\()(['"])(\.{1,2}\/[^'"]+)\.ts\2/g;

const tsc = join(ROOT, 'node_modules/.bin/tsc');
if (!existsSync(tsc)) {
  // `npm install --omit=dev` has no TypeScript: the export then stays unbuilt, and says so.
  process.stderr.write('typescript is not installed (dev dependencies omitted?): svc-orchestrator/simulate is not built\n');
  process.exit(0);
}
rmSync(OUT_DIR, { recursive: true, force: true });
// The project's compiler options, emitting: one entry and what it imports (machines/, the DSL).
execFileSync(
  tsc,
  [
    '--ignoreConfig', ENTRY, '--outDir', OUT_DIR, '--rootDir', ROOT, '--declaration', '--rewriteRelativeImportExtensions',
    '--target', 'es2024', '--module', 'nodenext', '--moduleResolution', 'nodenext', '--strict', '--erasableSyntaxOnly',
    '--verbatimModuleSyntax', '--allowImportingTsExtensions', '--skipLibCheck', '--types', 'node', '--lib', 'es2024',
  ],
  { cwd: ROOT, stdio: 'inherit' },
);
// tsc rewrites the JavaScript's imports to .js but leaves the declarations' at .ts, which a
// consumer's compiler would not find: point them at the .d.ts beside each .js.
let files = 0;
for (const name of readdirSync(OUT_DIR, { recursive: true, encoding: 'utf8' })) {
  if (!name.endsWith('.d.ts')) continue;
  const path = join(OUT_DIR, name);
  writeFileSync(path, readFileSync(path, 'utf8').replace(TS_SPECIFIER, '$1$2$3.js$2'));
  files++;
}
process.stdout.write(`dist/simulate: ${ENTRY} and its imports as JavaScript (${files} declaration files)\n`);
