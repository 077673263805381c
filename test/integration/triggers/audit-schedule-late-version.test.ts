// A schedule tick that read a schedule before a new version of its playbook changed the trigger
// (its payload; cron and timezone unchanged, so its due time stays) rendered the old payload and
// started the new version's workflow with it. The tick now takes the schedule only as it read it:
// the version changed, it leaves it to the next tick, which fires the due time with the new payload.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { http } from '../../helpers/http.ts';
import { runScheduleTick } from '../../../src/triggers/scheduler.ts';

let a: TestApp;
const PATH = 'audit/sched_late_version';

beforeAll(async () => {
  a = await startTestApp();
});
afterAll(async () => {
  await a?.close();
});

async function register(tag: string): Promise<void> {
  const yaml = `apiVersion: svc/v1
kind: Playbook
metadata: { name: late_version, path: ${PATH} }
inputs:
  tag: { type: string, required: true }
triggers:
  - { name: t, kind: schedule, cron: "* * * * *", overlap: allow, payload: { tag: "${tag}" } }
workflow:
  - step: start
    tool: { name: t, kind: noop }
`;
  const res = await http(a.url, 'POST', '/api/catalog/playbook', { content: yaml });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
}

async function started(): Promise<{ tag: string; fire_key: string }[]> {
  const { rows } = await a.deps.db.query<{ tag: string; fire_key: string }>(
    `SELECT e.context->'input'->'workload'->>'tag' AS tag, e.context->'trigger'->>'fire_key' AS fire_key FROM core.execution x
       JOIN core.event e ON e.execution_id = x.execution_id AND e.event_type = 'execution.started'
      WHERE x.path = $1 ORDER BY x.execution_id`,
    [PATH],
  );
  return rows;
}

it('a new version registered between a tick\'s look and its fire: the due time fires once, with the new payload', async () => {
  await register('one');
  await a.deps.db.query(`UPDATE core.trigger SET next_fire_at = $2 WHERE path = $1`, [PATH, '2030-05-01T00:00:00Z']);
  let registered = false;
  const db = new Proxy(a.deps.db, {
    get(target, prop) {
      if (prop === 'query') {
        return async (...args: Parameters<typeof target.query>) => {
          const result = await target.query(...args);
          const name = typeof args[0] === 'object' && args[0] !== null && 'name' in args[0] ? args[0].name : undefined;
          if (name === 'svc_look_at_schedules' && !registered) {
            registered = true;
            await register('two');
          }
          return result;
        };
      }
      const value: unknown = Reflect.get(target, prop, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  const at = () => new Date('2030-05-01T00:00:00.010Z');
  await runScheduleTick({ ...a.deps, db }, at);
  expect(registered).toBe(true);
  await runScheduleTick(a.deps, at);
  expect(await started()).toEqual([{ tag: 'two', fire_key: '2030-05-01T00:00:00.000Z' }]);
});
