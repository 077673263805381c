// A fire by hand or a backfill whose trigger a new version removes while the fire is being made
// starts nothing: the start would run the new version's workflow with the removed trigger's
// payload. The trigger is checked where the fire is recorded (in its transaction): 404, nothing
// started. Real PostgreSQL and HTTP; the new version is registered from inside the fire's
// transaction, just before its fire is recorded.
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TxTiming } from '../../../src/db/db.ts';
import type { Queryable } from '../../../src/db/queryable.ts';
import { backfill, fireByHand } from '../../../src/triggers/trigger-operations.ts';
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

const playbook = (path: string, triggers: string, description = 'with the trigger') => `apiVersion: svc/v1
kind: Playbook
metadata: { name: removed, path: ${path}, description: ${description} }
${triggers}workflow:
  - step: start
    tool: { name: t, kind: noop }
`;

async function register(content: string): Promise<void> {
  const res = await http(a.url, 'POST', '/api/catalog/playbook', { content });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
}

/** The app's engine whose next fire record first registers `content` (a version without the trigger). */
function removingOnRecord(content: string) {
  let done = false;
  const wrap = (q: Queryable): Queryable => ({
    async query<R extends pg.QueryResultRow>(text: string | pg.QueryConfig, params?: unknown[]) {
      if (typeof text === 'object' && text.name === 'svc_record_fires' && !done) {
        done = true;
        await register(content);
      }
      return q.query<R>(text, params);
    },
  });
  const db = new Proxy(a.deps.db, {
    get(target, prop) {
      if (prop === 'tx') return <T>(fn: (q: Queryable) => Promise<T>, timing?: TxTiming) => target.tx((q) => fn(wrap(q)), timing);
      const value: unknown = Reflect.get(target, prop, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  return { ...a.deps, db };
}

async function executions(path: string): Promise<number> {
  const { rows } = await a.deps.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM core.execution WHERE path = $1`, [path]);
  return rows[0]!.n;
}

describe('a trigger removed by a new version while it fires', () => {
  for (const how of ['fire by hand', 'backfill'] as const) {
    it(`${how}: 404, nothing started`, async () => {
      const path = `removed/${how.replace(/ /g, '_')}`;
      await register(playbook(path, 'triggers:\n  - { name: t, kind: schedule, cron: "@daily", overlap: allow }\n'));
      const deps = removingOnRecord(playbook(path, '', 'without the trigger'));
      const made = how === 'fire by hand' ? fireByHand(deps, path, 't', {}) : backfill(deps, path, 't', new Date('2026-01-01T00:00:00Z'), new Date('2026-01-03T00:00:00Z'));
      const err = await made.then(() => undefined, (e: unknown) => e);
      expect(err).toBeInstanceOf(ServiceError);
      expect(err).toMatchObject({ code: 'not_found', message: `trigger t of ${path} (removed while it fired: nothing started) not found` });
      expect(await executions(path)).toBe(0);
    });
  }
});
