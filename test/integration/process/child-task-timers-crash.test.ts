// A `playbook` task's timeout and retry delay are durable timers (rows, like a `wait` step's): on
// real `svc server` processes SIGKILLed while they run, the next server fires them: the child
// that outlived its timeout is cancelled and the task fails with code `timeout`; the retry's next
// child starts after its delay.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { http } from '../../helpers/http.ts';
import { withTimeout } from '../../helpers/process.ts';
import { ServerProcesses } from '../../helpers/server-processes.ts';
import { until } from '../../helpers/until.ts';

let bed: ServerProcesses;
beforeAll(async () => {
  bed = await ServerProcesses.open({});
});
afterEach(async () => {
  await bed?.stopAll();
});
afterAll(async () => {
  await bed?.close();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const PLAYBOOKS = [
  `apiVersion: svc/v1
metadata: { name: sleeper, path: crashkid/sleeper }
workflow:
  - step: start
    wait: { for: 60s }
`,
  // Fails at once, on the server: its wait's until is no time.
  `apiVersion: svc/v1
metadata: { name: failing, path: crashkid/failing }
workflow:
  - step: start
    wait: { until: "{{ args.at }}" }
`,
  `apiVersion: svc/v1
metadata: { name: timeout, path: crashkid/timeout }
workflow:
  - step: start
    tool: { name: kid, kind: playbook, path: crashkid/sleeper, timeout_seconds: 2 }
`,
  `apiVersion: svc/v1
metadata: { name: retry, path: crashkid/retry }
workflow:
  - step: start
    tool: { name: kid, kind: playbook, path: crashkid/failing, args: { at: never }, retry: { attempts: 2, delay_seconds: 2 } }
`,
];

const row = async (id: number) => (await bed.db.query<{ status: string; error: { code?: string } | null }>(`SELECT status, error FROM core.execution WHERE execution_id = $1`, [id])).rows[0];
const children = async (id: number) => (await bed.db.query<{ execution_id: string; status: string }>(`SELECT execution_id, status FROM core.execution WHERE parent_execution_id = $1 ORDER BY execution_id`, [id])).rows;

describe('a playbook task\'s timers across a crash', () => {
  it('the server SIGKILLed while they run: the next one times the child out and starts the retry', async () => {
    const a = await bed.server();
    for (const content of PLAYBOOKS) expect((await http(a.base, 'POST', '/api/catalog/playbook', { content })).status).toBe(201);
    const timedOut = (await http(a.base, 'POST', '/api/run/playbook', { path: 'crashkid/timeout' })).body.execution_id as number;
    const retried = (await http(a.base, 'POST', '/api/run/playbook', { path: 'crashkid/retry' })).body.execution_id as number;
    await until('both parents wait on their task timers', async () => {
      const { rows } = await bed.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM core.wait WHERE execution_id = ANY($1::bigint[])`, [[timedOut, retried]]);
      return rows[0].n === 2;
    }, 10_000);
    a.proc.kill('SIGKILL');
    await withTimeout(a.proc.exited, 10_000, 'a exit');
    // Nobody is up when the timers come due.
    await sleep(2500);
    expect((await row(timedOut)).status).toBe('running');
    await bed.server();
    await until('the timed-out parent failed', async () => (await row(timedOut)).status === 'failed', 30_000);
    expect((await row(timedOut)).error).toMatchObject({ code: 'timeout', step: 'start' });
    await until('its child is cancelled', async () => (await children(timedOut))[0]?.status === 'cancelled', 10_000);
    await until('the retried parent ended', async () => (await row(retried)).status === 'failed', 30_000);
    expect((await children(retried)).map((c) => c.status)).toEqual(['failed', 'failed']);
    expect((await bed.db.query(`SELECT count(*)::int AS n FROM core.wait WHERE execution_id = ANY($1::bigint[])`, [[timedOut, retried]])).rows[0].n).toBe(0);
  }, 120_000);
});
