import { chmod, mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort } from '../../helpers/ports.ts';
import { spawnSvc, waitForHealth, waitForOutput, withTimeout } from '../../helpers/process.ts';

// As root, the embedded PostgreSQL runs as the postgres user, which a 0700 directory of root's
// keeps out. `mktemp -d` makes exactly such a directory.
const asRoot = process.getuid?.() === 0;
const made: string[] = [];
const mktempDir = async () => {
  const dir = await mkdtemp(join(tmpdir(), 'svc-0700-'));
  made.push(dir);
  return dir;
};
afterAll(async () => {
  for (const dir of made) await rm(dir, { recursive: true, force: true });
});
const modeOf = async (dir: string) => (await stat(dir)).mode & 0o777;

describe.skipIf(!asRoot)('an SVC_DATA_DIR of mode 0700 as root', () => {
  it('an empty one (mktemp -d) works: others may now enter it (0701), nothing in it is theirs to read', async () => {
    const dataDir = await mktempDir();
    expect(await modeOf(dataDir)).toBe(0o700);
    // Port 0: a port picked beforehand may be taken meanwhile by another test's server, whose
    // health would then answer for this one.
    const p = spawnSvc(['start'], { SVC_DATA_DIR: dataDir, SVC_PORT: '0', SVC_HOST: '127.0.0.1', SVC_WORKER_CONCURRENCY: '0' });
    let started = false;
    try {
      await Promise.race([waitForOutput(p, 'Ctrl-C stops it.', 60_000), p.exited.then((code) => Promise.reject(new Error(`svc exited ${code}: ${p.output()}`)))]);
      const health = /health\s+(\S+)/.exec(p.output())?.[1];
      expect(health, p.output()).toBeDefined();
      await waitForHealth(health!, 10_000);
      started = true;
    } finally {
      p.kill('SIGTERM');
      const code = await withTimeout(p.exited, 30_000, 'stop');
      // A failed start has thrown already: its error (with the output) is the one to see.
      if (started) expect(code, p.output()).toBe(0);
    }
    expect(await modeOf(dataDir)).toBe(0o701);
    for (const name of ['encryption.key', 'pg-password', 'pg']) expect((await stat(join(dataDir, name))).mode & 0o007).toBe(0);
  });

  it('one holding a file others could read is refused with one line naming SVC_DATA_DIR and the fix, and left 0700', async () => {
    const dataDir = await mktempDir();
    await writeFile(join(dataDir, 'notes.txt'), 'mine\n', { mode: 0o644 });
    const p = spawnSvc(['start'], { SVC_DATA_DIR: dataDir, SVC_PORT: String(await freePort()), SVC_HOST: '127.0.0.1' });
    expect(await withTimeout(p.exited, 60_000, 'exit')).toBe(1);
    const lines = p.output().trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(new RegExp(`^svc start: SVC_DATA_DIR ${dataDir}: PostgreSQL runs as user postgres .*notes\\.txt.*chmod o\\+x ${dataDir}`));
    expect(await modeOf(dataDir)).toBe(0o700);
  });

  it('one below a 0700 directory is refused naming that directory, which is left as it is', async () => {
    const parent = await mktempDir();
    const dataDir = join(parent, 'data');
    const p = spawnSvc(['start'], { SVC_DATA_DIR: dataDir, SVC_PORT: String(await freePort()), SVC_HOST: '127.0.0.1' });
    expect(await withTimeout(p.exited, 60_000, 'exit')).toBe(1);
    expect(p.output().trim().split('\n')).toEqual([expect.stringMatching(new RegExp(`SVC_DATA_DIR ${dataDir}: .* cannot enter ${parent} \\(mode 0700, owner uid 0\\); allow it with 'chmod o\\+x ${parent}'`))]);
    expect(await modeOf(parent)).toBe(0o700);
    await chmod(parent, 0o755); // so that cleanup needs nothing special
  });
});
