// A child started by a `playbook` task ran at its own playbook's priority (5 when it declares
// none), whatever its parent's: a run started at priority 9 had its sub-playbooks' commands claimed
// behind every priority-6 command of the pool. A child now runs at its parent's priority when the
// parent has one (its start's, or its playbook's `priority:`), as the parent's own commands do;
// a parent at the default it did not ask for leaves the child at its own playbook's
// (docs/flow-control.md, "Priority and fairness"). Real server and database, no worker: the
// commands stay PENDING with the priority they were issued at.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { http } from '../../helpers/http.ts';
import { until } from '../../helpers/until.ts';

let t: TestApp;
let db: pg.Client;
beforeAll(async () => {
  t = await startTestApp();
  db = new pg.Client({ connectionString: t.databaseUrl });
  await db.connect();
  for (const content of [
    `apiVersion: svc/v1
metadata: { name: plain, path: prio/plain }
workflow:
  - step: start
    tool: { name: t, kind: noop }
`,
    `apiVersion: svc/v1
metadata: { name: low, path: prio/low }
priority: 2
workflow:
  - step: start
    tool: { name: t, kind: noop }
`,
    `apiVersion: svc/v1
metadata: { name: parent, path: prio/parent }
workflow:
  - step: start
    loop: { in: [prio/plain, prio/low], mode: parallel }
    tool: { name: child, kind: playbook, path: "{{ item }}" }
`,
    `apiVersion: svc/v1
metadata: { name: urgent, path: prio/urgent }
priority: 8
workflow:
  - step: start
    loop: { in: [prio/plain, prio/low], mode: parallel }
    tool: { name: child, kind: playbook, path: "{{ item }}" }
`,
  ]) expect((await http(t.url, 'POST', '/api/catalog/playbook', { content })).status).toBe(201);
});
afterAll(async () => {
  await db?.end();
  await t?.close();
});

/** The priority of each child's pending command, by the child's path. */
async function childPriorities(parent: number): Promise<Record<string, number>> {
  let rows: { path: string; priority: number }[] = [];
  await until('both children issued their command', async () => {
    ({ rows } = await db.query<{ path: string; priority: number }>(
      `SELECT e.path, c.priority FROM core.execution e JOIN core.command c USING (execution_id) WHERE e.parent_execution_id = $1`,
      [parent],
    ));
    return rows.length === 2;
  }, 10_000);
  return Object.fromEntries(rows.map((r) => [r.path, r.priority]));
}

describe("a child's priority", () => {
  it("is its parent's start's", async () => {
    const id = (await http(t.url, 'POST', '/api/run/playbook', { path: 'prio/parent', priority: 9 })).body.execution_id as number;
    expect(await childPriorities(id)).toEqual({ 'prio/plain': 9, 'prio/low': 9 });
  });

  it("is its parent's playbook's", async () => {
    const id = (await http(t.url, 'POST', '/api/run/playbook', { path: 'prio/urgent' })).body.execution_id as number;
    expect(await childPriorities(id)).toEqual({ 'prio/plain': 8, 'prio/low': 8 });
  });

  it("is a start's 5 when asked for, and its own playbook's under a parent at the default", async () => {
    const asked = (await http(t.url, 'POST', '/api/run/playbook', { path: 'prio/urgent', priority: 5 })).body.execution_id as number;
    expect(await childPriorities(asked)).toEqual({ 'prio/plain': 5, 'prio/low': 5 });
    const plain = (await http(t.url, 'POST', '/api/run/playbook', { path: 'prio/parent' })).body.execution_id as number;
    expect(await childPriorities(plain)).toEqual({ 'prio/plain': 5, 'prio/low': 2 });
  });
});
