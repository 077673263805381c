// svc_executions_started_total against the executions that really started: a child execution a
// playbook task starts (in a start's fold or a later routing's) is one; a start that joins a
// debounce window starts none.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { executionApi, type ExecutionApi } from '../../helpers/execution-api.ts';
import { http } from '../../helpers/http.ts';

const PLAYBOOKS = [
  `
apiVersion: svc/v1
kind: Playbook
metadata: { name: child, path: m/child }
workflow:
  - step: start
`,
  // The child starts in the same fold as its parent.
  `
apiVersion: svc/v1
kind: Playbook
metadata: { name: parent_now, path: m/parent-now }
workflow:
  - step: start
    tool: { name: c, kind: playbook, path: m/child }
`,
  // The child starts in a later routing (the timer's).
  `
apiVersion: svc/v1
kind: Playbook
metadata: { name: parent_later, path: m/parent-later }
workflow:
  - step: start
    wait: { for: 100ms }
    next: call
  - step: call
    tool: { name: c, kind: playbook, path: m/child }
`,
  `
apiVersion: svc/v1
kind: Playbook
metadata: { name: bounced, path: m/bounced }
debounce: { key: "{{ workload.d }}", seconds: 30 }
workflow:
  - step: start
`,
];

let t: TestApp;
let ex: ExecutionApi;
let db: pg.Client;
beforeAll(async () => {
  t = await startTestApp();
  ex = executionApi(t.url);
  for (const yaml of PLAYBOOKS) await ex.register(yaml);
  db = new pg.Client({ connectionString: t.databaseUrl });
  await db.connect();
});
afterAll(async () => {
  await db?.end();
  await t?.close();
});

async function metric(name: string, labels = ''): Promise<number> {
  const text = await (await fetch(`${t.url}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name}${labels} `));
  return line ? Number(line.split(' ')[1]) : 0;
}

/** Executions in the database, all of them. */
const executions = async () => Number((await db.query('SELECT count(*) AS n FROM core.execution')).rows[0].n);

describe('svc_executions_started_total', () => {
  it('counts a child execution a playbook task started, in the start or in a later routing', async () => {
    const before = await metric('svc_executions_started_total');
    const rowsBefore = await executions();
    const now = await ex.run('m/parent-now');
    const later = await ex.run('m/parent-later');
    expect((await ex.wait(now)).status).toBe('completed');
    expect((await ex.wait(later)).status).toBe('completed');
    // Two parents and their two children.
    expect((await executions()) - rowsBefore).toBe(4);
    expect((await metric('svc_executions_started_total')) - before).toBe(4);
    expect(await metric('svc_executions_finished_total', '{status="completed"}')).toBeGreaterThanOrEqual(4);
  });

  it('does not count a start that joined a debounce window: it started nothing', async () => {
    const before = await metric('svc_executions_started_total');
    const rowsBefore = await executions();
    const first = await http(t.url, 'POST', '/api/run/playbook', { path: 'm/bounced', payload: { d: 'x' } });
    const second = await http(t.url, 'POST', '/api/run/playbook', { path: 'm/bounced', payload: { d: 'x' } });
    expect(second.body).toMatchObject({ execution_id: first.body.execution_id, debounced: true });
    expect((await executions()) - rowsBefore).toBe(1);
    expect((await metric('svc_executions_started_total')) - before).toBe(1);
  });
});
