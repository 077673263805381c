// The retention tests' stage: a server, a worker process of four slots, an archive directory,
// execution ids from a given number on (above the migration's first ranges of a million) and one
// playbook registered. Each of those tests wrote these lines itself.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import { startTestApp, type TestApp } from './app.ts';
import { http } from './http.ts';
import { startWorkerProcess, type WorkerProcess } from './worker-process.ts';

export type ArchiveStage = { t: TestApp; worker: WorkerProcess; archiveDir: string; close(): Promise<void> };

/** Starts the stage: ids from `firstId`, `playbook` (YAML) registered, the directory named from `dirPrefix`. */
export async function startArchiveStage(firstId: number, playbook: string, dirPrefix: string): Promise<ArchiveStage> {
  const t = await startTestApp();
  const worker = await startWorkerProcess(t.url, { concurrency: 4, env: { SVC_WORKER_TOKEN: t.workerToken } });
  const archiveDir = await mkdtemp(join(tmpdir(), dirPrefix));
  await t.deps.db.query(`SELECT setval('core.execution_id_seq', $1, false)`, [firstId]);
  const registered = await http(t.url, 'POST', '/api/catalog/playbook', { content: playbook });
  expect(registered.status, JSON.stringify(registered.body)).toBe(201);
  return {
    t,
    worker,
    archiveDir,
    async close() {
      await worker.stop();
      await t.close();
      await rm(archiveDir, { recursive: true, force: true });
    },
  };
}
