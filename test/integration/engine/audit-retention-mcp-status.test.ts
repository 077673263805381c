// An MCP server's status is read from its last lifecycle action's execution (src/api/mcp-status.ts).
// Retention deleted that execution with its range, and the status read `registered` again: a
// server deployed long ago, still running, showed as never deployed (and an undeployed one as
// registered, not stopped). The drop now keeps the execution's final status on the resource row
// before it deletes the execution, and the status is read from it once the execution is gone.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keepEventPartitions } from '../../../src/partitions/event-partitions.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { http } from '../../helpers/http.ts';

const WIDTH = 10;
const LO = 4_000_000;

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
  await t.deps.db.query(`SELECT setval('core.execution_id_seq', $1, true)`, [LO]);
  await run(null);
  await t.deps.db.query(`SELECT setval('core.execution_id_seq', $1, true)`, [LO + 25]);
});
afterAll(async () => {
  await t?.close();
});

const run = (retentionDays: number | null) => keepEventPartitions(t.deps, { width: WIDTH, retentionDays, archiveDir: null });

describe('retention of an MCP server\'s last lifecycle execution', () => {
  it('keeps the status it gave the server once the execution is dropped', async () => {
    await run(null);
    const { rows: [catalog] } = await t.deps.db.query<{ id: string }>(`INSERT INTO core.catalog (path, version, content, payload) VALUES ('ret/mcp', 1, 'x', '{}') RETURNING catalog_id AS id`);
    // Range LO: the deploy of one server (completed), the undeploy of another (completed), a
    // failed status check of a third; all finished two days ago.
    const servers: [string, string, number, string][] = [['deployed', 'deploy', LO + 1, 'completed'], ['undeployed', 'undeploy', LO + 2, 'completed'], ['unreachable', 'status', LO + 3, 'failed']];
    for (const [name, action, id, status] of servers) {
      await t.deps.db.query(
        `INSERT INTO core.execution (execution_id, catalog_id, path, root_execution_id, status, last_event_id, finished_at)
         VALUES ($1, $2, 'ret/mcp', $1, $3, 1, now() - interval '2 days')`,
        [id, catalog.id, status],
      );
      await t.deps.db.query(`INSERT INTO core.resource (kind, name, config, last_action, last_execution_id) VALUES ('mcp', $1, '{}', $2, $3)`, [name, action, id]);
    }
    const statuses = async () => Object.fromEntries((await http(t.url, 'GET', '/api/mcp/servers')).body.items.map((s: { name: string; status: string }) => [s.name, s.status]));
    const before = await statuses();
    expect(before).toEqual({ deployed: 'running', undeployed: 'stopped', unreachable: 'unreachable' });

    const report = await run(1);
    expect(report.dropped.map((d) => d.range)).toContainEqual({ lo: LO, hi: LO + WIDTH });
    expect((await http(t.url, 'GET', `/api/executions/${LO + 1}`)).status).toBe(404);
    expect(await statuses()).toEqual(before);
    expect((await http(t.url, 'GET', '/api/mcp/servers/deployed')).body).toMatchObject({ status: 'running', last_action: 'deploy', last_execution_id: LO + 1 });
  });
});
