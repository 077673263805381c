// Found by the documentation audit (helper): what a user who follows docs/triggers.md and
// docs/playbook-dsl.md literally gets back from a real server.
// - "The server validates it completely at registration: every problem comes back at once":
//   a schedule with an unknown timezone and a cron that does not parse got only the timezone's
//   problem, and its cron's only after that was fixed and registered again.
// - Pause and resume take "no body (or {}): a field sent is 422, naming it": it was named, then
//   followed by an empty "(known: )".
// - A fire by hand of a webhook: the doc said only what a schedule's renders; it takes the body's
//   payload alone (its own payload reads request). Pinned, and docs/triggers.md says so.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { http } from '../../helpers/http.ts';

let a: TestApp;

beforeAll(async () => {
  a = await startTestApp();
});
afterAll(async () => {
  await a?.close();
});

const playbook = (path: string, trigger: string) => `apiVersion: svc/v1
kind: Playbook
metadata: { name: audit, path: ${path} }
triggers:
${trigger}
workflow:
  - step: start
    tool: { name: t, kind: noop }
`;

function problemPaths(body: unknown): string[] {
  const detail = (body as { detail?: { problems?: { path: string }[] } }).detail;
  return (detail?.problems ?? []).map((p) => p.path);
}

describe('trigger problems at registration, as the docs say', () => {
  it('reports a bad cron beside a bad timezone, each at its place, at once', async () => {
    for (const timezone of ['"+05:00"', 'Mars/Olympus']) {
      const res = await http(a.url, 'POST', '/api/catalog/playbook', {
        content: playbook('audit/tz-and-cron', `  - { name: nightly, kind: schedule, cron: "0 25 * * *", timezone: ${timezone} }`),
      });
      expect(res.status, JSON.stringify(res.body)).toBe(400);
      expect(problemPaths(res.body), JSON.stringify(res.body)).toEqual(expect.arrayContaining(['triggers[0].timezone', 'triggers[0].cron']));
      expect(JSON.stringify(res.body)).toContain("'0 25 * * *' is not a cron expression");
    }
  });

  it('still reports the timezone alone when the cron is right', async () => {
    const res = await http(a.url, 'POST', '/api/catalog/playbook', {
      content: playbook('audit/tz-only', '  - { name: nightly, kind: schedule, cron: "0 2 * * *", timezone: Mars/Olympus }'),
    });
    expect(res.status).toBe(400);
    expect(problemPaths(res.body)).toEqual(['triggers[0].timezone']);
  });

  it('names a field sent to pause or resume without an empty list of known ones', async () => {
    const ok = await http(a.url, 'POST', '/api/catalog/playbook', {
      content: playbook('audit/pause-body', '  - { name: nightly, kind: schedule, cron: "0 2 * * *" }'),
    });
    expect(ok.status, JSON.stringify(ok.body)).toBe(201);
    for (const action of ['pause', 'resume']) {
      const res = await http(a.url, 'POST', `/api/triggers/audit/pause-body/nightly/${action}`, { x: 1 });
      expect(res.status).toBe(422);
      const errors = (res.body as { detail: { errors: string[] } }).detail.errors;
      expect(errors).toEqual([expect.stringMatching(/^x: unknown field/)]);
      expect(errors[0]).not.toContain('known: )');
      expect(errors[0]).toContain('takes no fields');
    }
  });

  it('fires a webhook by hand with the body\'s payload alone: its own payload reads request, which a fire by hand has none of', async () => {
    const yaml = `apiVersion: svc/v1
kind: Playbook
metadata: { name: audit, path: audit/hook-by-hand }
workload: { repo: none, event: none }
triggers:
  - { name: push, kind: webhook, auth: nobody, payload: { repo: "{{ request.body.repo }}", event: "{{ request.headers['x-event'] }}" } }
workflow:
  - step: start
    tool: { name: t, kind: noop }
`;
    expect((await http(a.url, 'POST', '/api/catalog/playbook', { content: yaml })).status).toBe(201);
    const res = await http(a.url, 'POST', '/api/triggers/audit/hook-by-hand/push/fire', { payload: { repo: 'acme/shop' } });
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    const { rows } = await a.deps.db.query(`SELECT context->'input'->'workload' AS workload FROM core.event WHERE execution_id = $1 AND event_type = 'execution.started'`, [res.body.execution_id]);
    expect(rows[0].workload).toEqual({ repo: 'acme/shop', event: 'none' });
  });
});
