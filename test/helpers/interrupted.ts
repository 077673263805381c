import { expect } from 'vitest';
import { asWorker } from './auth.ts';
import { http } from './http.ts';

/**
 * Beats worker pool `body.name` (registered) every `everyMs` until `stop()`, which also waits for
 * its last beat: one still in flight when the test closed its server was an unhandled rejection
 * ("other side closed"), which fails the whole run though every test passed.
 */
export function beatAsAPool(url: string, body: { name: string; running?: number[] }, everyMs: number): { stop(): Promise<void> } {
  let beating: Promise<unknown> = Promise.resolve();
  // A beat refused or cut short is no test's subject: the next one comes `everyMs` later.
  const beat = setInterval(() => (beating = http(url, 'POST', '/api/worker/pool/heartbeat', body, asWorker).catch(() => undefined)), everyMs);
  return {
    async stop() {
      clearInterval(beat);
      await beating;
    },
  };
}

/**
 * Runs `fn` while a worker pool beats every 300 ms (auto-resume waits for a live pool before it
 * looks), the beat stopped after whatever `fn` does.
 */
export async function whileAPoolBeats<T>(url: string, fn: () => Promise<T>): Promise<T> {
  expect((await http(url, 'POST', '/api/worker/pool/register', { name: 'w-beats', capacity: 1 }, asWorker)).status).toBe(200);
  const beat = beatAsAPool(url, { name: 'w-beats' }, 300);
  try {
    return await fn();
  } finally {
    await beat.stop();
  }
}

/**
 * Leaves execution `id` as a stop does: its PENDING command claimed by a pool that is then gone,
 * and nothing moving for `staleMs` (past SVC_AUTO_RESUME_MIN_STALE_SECONDS=1). A command still
 * PENDING would be a backlog, which auto-resume leaves alone.
 */
export async function interruptAsAStopDoes(url: string, id: number, staleMs = 1_500): Promise<void> {
  expect((await http(url, 'POST', '/api/worker/pool/register', { name: 'w-gone', capacity: 1 }, asWorker)).status).toBe(200);
  const claimed = await http(url, 'POST', '/api/worker/claim', { worker_id: 'w-gone', max: 1, wait_ms: 0 }, asWorker);
  expect(claimed.body.commands.map((c: { execution_id: number }) => c.execution_id)).toEqual([id]);
  expect((await http(url, 'POST', '/api/worker/pool/deregister', { name: 'w-gone' }, asWorker)).status).toBe(200);
  await new Promise((r) => setTimeout(r, staleMs));
}
