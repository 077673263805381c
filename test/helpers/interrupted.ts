import { expect } from 'vitest';
import { asWorker } from './auth.ts';
import { http } from './http.ts';

/**
 * Runs `fn` while a worker pool beats every 300 ms (auto-resume waits for a live pool before it
 * looks), the beat stopped after whatever `fn` does.
 */
export async function whileAPoolBeats<T>(url: string, fn: () => Promise<T>): Promise<T> {
  expect((await http(url, 'POST', '/api/worker/pool/register', { name: 'w-beats', capacity: 1 }, asWorker)).status).toBe(200);
  const beat = setInterval(() => void http(url, 'POST', '/api/worker/pool/heartbeat', { name: 'w-beats' }, asWorker), 300);
  try {
    return await fn();
  } finally {
    clearInterval(beat);
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
