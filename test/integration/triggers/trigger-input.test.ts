// What the trigger API refuses, on a real server and PostgreSQL: every bad input is a 4xx whose
// detail names the field, never a 500, and changes nothing. A timezone that is no IANA name, a
// backfill range whose times are not real (year 0000, February 30) or not past, a fire by hand
// whose body is not an object.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { http, type Json } from '../../helpers/http.ts';

let a: TestApp;

beforeAll(async () => {
  a = await startTestApp();
});
afterAll(async () => {
  await a?.close();
});

const playbook = (path: string, trigger: string) => `apiVersion: svc/v1
kind: Playbook
metadata: { name: input, path: ${path} }
workload: { day: none }
triggers:
  - ${trigger}
workflow:
  - step: start
    tool: { name: t, kind: noop }
`;

async function register(path: string, trigger: string): Promise<{ status: number; body: Json }> {
  return http(a.url, 'POST', '/api/catalog/playbook', { content: playbook(path, trigger) });
}

async function executionCount(path: string): Promise<number> {
  const { rows } = await a.deps.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM core.execution WHERE path = $1`, [path]);
  return rows[0].n;
}

async function fireCount(path: string): Promise<number> {
  const { rows } = await a.deps.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM core.trigger_fire WHERE path = $1`, [path]);
  return rows[0].n;
}

describe('a schedule\'s timezone', () => {
  it('is an IANA name: a UTC offset is a 400 problem at triggers[0].timezone and registers nothing', async () => {
    for (const timezone of ['"+05:00"', '"-0500"']) {
      const res = await register('input/offset', `{ name: n, kind: schedule, cron: "0 2 * * *", timezone: ${timezone} }`);
      expect(res.status, JSON.stringify(res.body)).toBe(400);
      const problems = (res.body.problems ?? res.body.detail?.problems) as { path: string; message: string }[];
      expect(problems).toEqual([expect.objectContaining({ path: 'triggers[0].timezone', message: expect.stringContaining('is a UTC offset, not an IANA timezone') })]);
    }
    expect((await http(a.url, 'GET', '/api/triggers')).body.triggers.some((t: Json) => t.path === 'input/offset')).toBe(false);
    // The fixed-offset IANA name is taken.
    expect((await register('input/offset', '{ name: n, kind: schedule, cron: "0 2 * * *", timezone: Etc/GMT-5 }')).status).toBe(201);
  });
});
