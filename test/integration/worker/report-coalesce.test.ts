import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../../src/log.ts';
import { Worker } from '../../../src/worker/worker.ts';
import { startTestStack, type TestStack } from '../../helpers/stack.ts';

const SLOTS = 8;

let s: TestStack;
beforeAll(async () => {
  s = await startTestStack({ workers: 0 });
  await s.register(`
apiVersion: svc/v1
kind: Playbook
metadata: { name: one, path: worker/one }
workflow:
  - step: only
    tool: { name: t, kind: noop }
`);
});
afterAll(async () => {
  await s?.close();
});

describe('worker reports of quick commands', () => {
  it('commands of one claimed batch that finish together go in one report', async () => {
    const ids: number[] = [];
    for (let i = 0; i < SLOTS; i++) ids.push(await s.run('worker/one'));
    // All pending before the pool starts: its first claim takes all of them at once.
    const worker = new Worker({ serverUrl: s.url, token: s.workerToken, concurrency: SLOTS, env: {}, log: createLogger('warn'), claimWaitMs: 2_000 });
    const requests: string[] = [];
    const request = worker.client.request.bind(worker.client);
    worker.client.request = <T>(method: string, path: string, body?: unknown, signal?: AbortSignal): Promise<T> => {
      requests.push(`${method} ${path}`);
      return request<T>(method, path, body, signal);
    };
    await worker.start();
    try {
      for (const id of ids) expect((await s.wait(id)).status).toBe('completed');
    } finally {
      await worker.stop();
    }
    const reports = requests.filter((r) => r === 'POST /api/worker/report');
    // Reported one at a time this was 8 reports (or 1 + 7 while the first was in flight).
    expect(reports).toHaveLength(1);
    for (const id of ids) {
      const types = (await s.events(id)).map((e) => e.event_type);
      expect(types).toContain('command.completed');
      expect(types.at(-1)).toBe('playbook.completed');
    }
  });
});
