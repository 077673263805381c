// A fire by hand or a backfill of a schedule renders its payload from the trigger as it read it.
// A new version registered between that read and the fire's transaction started the new
// version's workflow with the old version's payload. The fire now finds the trigger still of the
// version it read, or writes nothing and reads it again: every start has the new payload. A
// trigger that changes at every read is a 409, and nothing starts. A resume reads the schedule
// under its row's lock, so its next fire is of the cron a new version wrote, never the old one's.
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Db } from '../../../src/db/db.ts';
import { backfill, fireByHand, pauseTrigger } from '../../../src/triggers/trigger-operations.ts';
import { ServiceError } from '../../../src/errors.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { http } from '../../helpers/http.ts';

let a: TestApp;

beforeAll(async () => {
  a = await startTestApp();
});
afterAll(async () => {
  await a?.close();
});

async function register(path: string, tag: string, cron = '0 * * * *'): Promise<void> {
  const yaml = `apiVersion: svc/v1
kind: Playbook
metadata: { name: late_version, path: ${path} }
inputs:
  tag: { type: string, required: true }
triggers:
  - { name: t, kind: schedule, cron: "${cron}", overlap: allow, payload: { tag: "${tag}" } }
workflow:
  - step: start
    tool: { name: t, kind: noop }
`;
  const res = await http(a.url, 'POST', '/api/catalog/playbook', { content: yaml });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
}

/** Each execution the trigger started: the tag of its payload, and whether it runs the newest version. */
async function started(path: string): Promise<{ tag: string; newest: boolean }[]> {
  const { rows } = await a.deps.db.query<{ tag: string; newest: boolean }>(
    `SELECT e.context->'input'->'workload'->>'tag' AS tag, x.catalog_id = (SELECT max(catalog_id) FROM core.catalog WHERE path = $1) AS newest
       FROM core.execution x JOIN core.event e ON e.execution_id = x.execution_id AND e.event_type = 'execution.started'
      WHERE x.path = $1 ORDER BY x.execution_id`,
    [path],
  );
  return rows;
}

/** The app's deps whose database registers a new version (tags from `tags`) after each read of the trigger, while tags last. */
function changingAfterReads(path: string, tags: string[]) {
  const db = new Proxy(a.deps.db, {
    get(target, prop) {
      if (prop === 'query') {
        return async (...args: Parameters<Db['query']>) => {
          const result = await target.query(...args);
          const text = typeof args[0] === 'string' ? args[0] : args[0].text;
          if (/FROM core\.trigger\b/.test(text) && /WHERE path = \$1 AND name = \$2/.test(text) && tags.length > 0) await register(path, tags.shift()!);
          return result;
        };
      }
      const value: unknown = Reflect.get(target, prop, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  return { ...a.deps, db };
}

it('a fire by hand that read the schedule before a new version: it reads it again, and starts once with the new payload', async () => {
  const path = 'audit/fire_late_version';
  await register(path, 'one');
  const fired = await fireByHand(changingAfterReads(path, ['two']), path, 't', {});
  expect(fired).toMatchObject({ outcome: 'started', duplicate: false });
  expect(await started(path)).toEqual([{ tag: 'two', newest: true }]);
});

it('a backfill that read the schedule before a new version: every time starts once, with the new payload', async () => {
  const path = 'audit/backfill_late_version';
  await register(path, 'one');
  const done = await backfill(changingAfterReads(path, ['two']), path, 't', new Date('2026-01-01T00:00:00Z'), new Date('2026-01-01T03:00:00Z'));
  expect(done).toMatchObject({ skipped: 0, refused: [] });
  expect(done.execution_ids).toHaveLength(3);
  expect(await started(path)).toEqual([
    { tag: 'two', newest: true },
    { tag: 'two', newest: true },
    { tag: 'two', newest: true },
  ]);
  // The same range again starts nothing: its three times were made.
  expect(await backfill(a.deps, path, 't', new Date('2026-01-01T00:00:00Z'), new Date('2026-01-01T03:00:00Z'))).toMatchObject({ execution_ids: [], skipped: 3 });
});

it('a schedule that changes at every read: 409, and nothing started', async () => {
  const path = 'audit/fire_kept_changing';
  await register(path, 'zero');
  const deps = changingAfterReads(path, ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h']);
  const err = await fireByHand(deps, path, 't', {}).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(ServiceError);
  expect((err as ServiceError).message).toMatch(/kept changing while it fired/);
  const err2 = await backfill(deps, path, 't', new Date('2026-01-01T00:00:00Z'), new Date('2026-01-01T02:00:00Z')).catch((e: unknown) => e);
  expect((err2 as ServiceError).message).toMatch(/kept changing while it backfilled/);
  expect(await started(path)).toEqual([]);
});

it('a resume whose schedule a new version re-timed as it resumed: its next fire is of the new cron', async () => {
  const path = 'audit/resume_late_version';
  await register(path, 'one');
  expect((await http(a.url, 'POST', `/api/triggers/${path}/t/pause`, {})).status).toBe(200);
  // The new version (at minute 30, not 0) commits after the resume's read of the row, before its write.
  let registered = false;
  const db = new Proxy(a.deps.db, {
    get(target, prop) {
      if (prop === 'query' || prop === 'tx') {
        return async (...args: unknown[]) => {
          if (!registered && (prop === 'tx' || /FROM core\.trigger\b/.test(String((args[0] as { text?: string }).text ?? args[0])))) {
            // Before the fix the resume read the row here, outside its transaction.
            if (prop === 'query') {
              const result: unknown = await Reflect.apply(target.query, target, args);
              registered = true;
              await register(path, 'one', '30 * * * *');
              return result;
            }
            registered = true;
            await register(path, 'one', '30 * * * *');
          }
          return Reflect.apply(Reflect.get(target, prop, target) as (...a: unknown[]) => unknown, target, args);
        };
      }
      const value: unknown = Reflect.get(target, prop, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  const now = new Date('2030-05-01T10:10:00Z');
  const view = await pauseTrigger({ ...a.deps, db }, path, 't', false, now);
  expect(registered).toBe(true);
  expect(view.state).toBe('active');
  const { rows } = await a.deps.db.query<{ next_fire_at: Date }>('SELECT next_fire_at FROM core.trigger WHERE path = $1', [path]);
  expect(rows[0].next_fire_at.toISOString()).toBe('2030-05-01T10:30:00.000Z');
});
