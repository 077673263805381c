// `svc-orchestrator/simulate` as a user's project gets it: the tarball `npm pack` makes, unpacked
// into a project's node_modules, imported by plain `node` (which strips types only outside
// node_modules) and type-checked by `tsc` through the export's declarations.
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readdir, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NODE24, ROOT } from '../../helpers/process.ts';

const run = promisify(execFile);
const BIN = join(ROOT, 'node_modules/.bin');
// npm's scripts find this project's Node 24 first on PATH (prepare runs .ts scripts).
const env = { ...process.env, PATH: `${BIN}:${process.env.PATH ?? ''}` };
let project: string;

beforeAll(async () => {
  project = await mkdtemp(join(tmpdir(), 'svc-simulate-user-'));
  // Its `prepare` (the GUI if stale, the simulate export) runs first, as it does for a publish.
  await run('npm', ['pack', '--pack-destination', project], { cwd: ROOT, env, maxBuffer: 64 * 1024 * 1024 });
  const filename = (await readdir(project)).find((name) => name.endsWith('.tgz'));
  if (!filename) throw new Error('npm pack made no tarball');
  const modules = join(project, 'node_modules');
  await mkdir(join(modules, 'svc-orchestrator'), { recursive: true });
  await run('tar', ['-xzf', join(project, filename), '-C', join(modules, 'svc-orchestrator'), '--strip-components=1']);
  // Its dependencies as npm would have installed them (no registry here): this checkout's.
  for (const name of await readdir(join(ROOT, 'node_modules'))) {
    if (name !== '.bin' && name !== 'svc-orchestrator') await symlink(join(ROOT, 'node_modules', name), join(modules, name));
  }
  await writeFile(join(project, 'package.json'), JSON.stringify({ name: 'user-project', private: true, type: 'module' }));
}, 180_000);

afterAll(async () => {
  if (project) await rm(project, { recursive: true, force: true });
});

describe('svc-orchestrator/simulate from an installed tarball', () => {
  it('plain node imports it and simulates the hello example', async () => {
    const script = `
      import { readFileSync } from 'node:fs';
      import { simulatePlaybook, playbookPaths } from 'svc-orchestrator/simulate';
      const yaml = readFileSync(${JSON.stringify(join(ROOT, 'examples/hello.yaml'))}, 'utf8');
      const ok = simulatePlaybook(yaml);
      const failed = simulatePlaybook(yaml, { square: ['ok', 'error'] });
      console.log(JSON.stringify({ status: ok.status, path: ok.path, failed: failed.status, report: failed.steps.report.status, paths: playbookPaths(yaml).paths.length }));`;
    const { stdout } = await run(NODE24, ['--input-type=module', '-e', script], { cwd: project });
    const answer: unknown = JSON.parse(stdout);
    expect(answer).toMatchObject({ status: 'completed', path: ['start', 'square', 'report'], failed: 'failed', report: 'skipped' });
  }, 60_000);

  it('its declarations type-check a user file (and catch a misuse)', async () => {
    const good = `import { simulatePlaybook } from 'svc-orchestrator/simulate';\nconst status: string = simulatePlaybook('x').status;\nexport { status };\n`;
    const bad = `import { simulatePlaybook } from 'svc-orchestrator/simulate';\nconst n: number = simulatePlaybook('x').status;\nexport { n };\n`;
    await writeFile(join(project, 'good.ts'), good);
    await writeFile(join(project, 'bad.ts'), bad);
    const flags = ['--ignoreConfig', '--noEmit', '--strict', '--module', 'nodenext', '--moduleResolution', 'nodenext', '--target', 'es2024', '--types', 'node', '--lib', 'es2024'];
    const typesRoot = ['--typeRoots', join(ROOT, 'node_modules/@types')];
    await expect(run(join(BIN, 'tsc'), [...flags, ...typesRoot, 'good.ts'], { cwd: project })).resolves.toBeDefined();
    const refused = await run(join(BIN, 'tsc'), [...flags, ...typesRoot, 'bad.ts'], { cwd: project }).then(
      () => '',
      (err: { stdout?: string }) => err.stdout ?? '',
    );
    expect(refused).toMatch(/bad\.ts\(2,7\): error TS2322/);
  }, 120_000);
});
