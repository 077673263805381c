// An MCP server's (or agent's) row was read with its catalog and last execution ids cast to a
// 32-bit int: once execution ids passed 2^31 - 1 (the sequence is a bigint), every read of the
// servers answered 500 ("integer out of range"). They are read as the bigints they are.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { http } from '../../helpers/http.ts';

const PAST_INT = 3_000_000_000;

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t?.close();
});

describe('MCP servers whose last lifecycle execution has an id past 2^31', () => {
  it('are listed and read with that id', async () => {
    const { rows: [catalog] } = await t.deps.db.query<{ id: string }>(`INSERT INTO core.catalog (path, version, content, payload) VALUES ('big/mcp', 1, 'x', '{}') RETURNING catalog_id AS id`);
    await t.deps.db.query(
      `INSERT INTO core.execution (execution_id, catalog_id, path, root_execution_id, status, last_event_id, finished_at)
       VALUES ($1, $2, 'big/mcp', $1, 'completed', 1, now())`,
      [PAST_INT, catalog.id],
    );
    await t.deps.db.query(`INSERT INTO core.resource (kind, name, config, last_action, last_execution_id) VALUES ('mcp', 'big', '{}', 'deploy', $1)`, [PAST_INT]);
    const list = await http(t.url, 'GET', '/api/mcp/servers');
    expect(list.status).toBe(200);
    expect(list.body.items).toContainEqual(expect.objectContaining({ name: 'big', status: 'running', last_execution_id: PAST_INT }));
    const one = await http(t.url, 'GET', '/api/mcp/servers/big');
    expect(one.status).toBe(200);
    expect(one.body).toMatchObject({ status: 'running', last_execution_id: PAST_INT });
  });
});
