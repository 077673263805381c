// An SVC_DATA_DIR that cannot be a directory stopped `svc server` and `svc start` with exit 1 and
// the file system's words alone: "svc server: EEXIST: file already exists, mkdir '/srv/svc'" (a
// file there), "ENOTDIR: not a directory, mkdir '/srv/file/svc'", naming no setting. It is a bad
// setting: exit 78, naming SVC_DATA_DIR, as every other one.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { spawnSvc, withTimeout } from '../../helpers/process.ts';

const dir = mkdtempSync(join(tmpdir(), 'svc-data-dir-'));
const file = join(dir, 'a-file');
writeFileSync(file, 'not a directory\n');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

it('svc server and svc start: an SVC_DATA_DIR that is a file, or under one, stops them (78) naming it', async () => {
  for (const [command, dataDir] of [['server', file], ['start', join(file, 'svc')]]) {
    const p = spawnSvc([command], { SVC_DATA_DIR: dataDir, SVC_PORT: '0', SVC_WORKER_TOKEN: '' });
    const code = await withTimeout(p.exited, 30_000, `svc ${command}`).catch((err: unknown) => {
      p.kill('SIGKILL');
      throw err;
    });
    expect(code, p.output()).toBe(78);
    expect(p.output()).toMatch(new RegExp(`^svc ${command}: invalid SVC_DATA_DIR: ${dataDir.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: `, 'm'));
  }
});
