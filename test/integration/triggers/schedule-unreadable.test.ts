// A schedule whose stored spec this version no longer reads (registered under older, looser rules:
// a name over 128 characters before e642708) must not stop the others: the timekeeper shelves it
// (no next fire, the reason in last_error) and fires the rest; the listing answers 200; pausing it
// works, and what needs its spec answers 409 saying to register again. Real PostgreSQL and HTTP.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { http, type Json } from '../../helpers/http.ts';
import { runScheduleTick } from '../../../src/triggers/scheduler.ts';

let a: TestApp;

beforeAll(async () => {
  a = await startTestApp();
});
afterAll(async () => {
  await a?.close();
});

async function register(path: string, description = 'first'): Promise<void> {
  const yaml = `apiVersion: svc/v1
kind: Playbook
metadata: { name: unreadable, path: ${path}, description: ${description} }
triggers:
  - { name: t, kind: schedule, cron: "* * * * *", overlap: allow }
workflow:
  - step: start
    tool: { name: t, kind: noop }
`;
  const res = await http(a.url, 'POST', '/api/catalog/playbook', { content: yaml });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
}

describe('a schedule stored under older rules', () => {
  it('is shelved by the tick while the others fire; listed, paused, and refused 409 (not 500) for what needs its spec', async () => {
    await register('unreadable/old');
    await register('unreadable/fine');
    // As stored before names had a limit.
    await a.deps.db.query(`UPDATE core.trigger SET spec = jsonb_set(spec, '{name}', to_jsonb(repeat('n', 200))) WHERE path = 'unreadable/old'`);
    await a.deps.db.query(`UPDATE core.trigger SET next_fire_at = '2031-01-01T00:00:00Z' WHERE path LIKE 'unreadable/%'`);

    const report = await runScheduleTick(a.deps, () => new Date('2031-01-01T00:00:00.010Z'));
    expect(report).toMatchObject({ started: 1, refused: 1 });
    const { rows } = await a.deps.db.query<{ path: string; next_fire_at: Date | null; last_error: string | null; errors: number }>(
      `SELECT path, next_fire_at, last_error, errors::int AS errors FROM core.trigger WHERE path LIKE 'unreadable/%' ORDER BY path`,
    );
    expect(rows[0]).toMatchObject({ path: 'unreadable/fine', next_fire_at: new Date('2031-01-01T00:01:00Z'), last_error: null });
    expect(rows[1]).toMatchObject({ path: 'unreadable/old', next_fire_at: null, errors: 1 });
    expect(rows[1].last_error).toMatch(/^the stored schedule no longer reads \(name: .*128 characters.*\): register a new version of the playbook$/);

    const listed = await http(a.url, 'GET', '/api/triggers');
    expect(listed.status, JSON.stringify(listed.body)).toBe(200);
    expect(listed.body.triggers.find((t: Json) => t.path === 'unreadable/old')).toMatchObject({ next_fires: [], errors: 1 });
    expect((await http(a.url, 'POST', '/api/triggers/unreadable/old/t/pause', {})).status).toBe(200);
    for (const action of ['resume', 'fire']) {
      const res = await http(a.url, 'POST', `/api/triggers/unreadable/old/t/${action}`, {});
      expect(res.status, JSON.stringify(res.body)).toBe(409);
      expect(res.body.detail.message).toMatch(/no longer reads .*register a new version of the playbook/);
    }
    // A new version makes it live again, with a next fire.
    await register('unreadable/old', 'second');
    await a.deps.db.query(`UPDATE core.trigger SET paused = false WHERE path = 'unreadable/old'`);
    const again = (await http(a.url, 'GET', '/api/triggers')).body.triggers.find((t: Json) => t.path === 'unreadable/old');
    expect(again.next_fires).toHaveLength(3);
  });
});
