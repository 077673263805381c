// An idle server's clocked loops (the timekeeper of waits, the scheduler, the admitter) look once a
// second each, and each look is one statement: what is due and when to look next, read together.
import { afterAll, beforeAll, expect, it } from 'vitest';
import type pg from 'pg';
import { startScheduler } from '../../../src/triggers/scheduler.ts';
import { ScheduleClock } from '../../../src/triggers/schedule-clock.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({}, { batchProcessors: false });
});
afterAll(async () => {
  await t?.close();
});

it('an idle server sends one statement per look: the due work and the next time together', async () => {
  const scheduler = startScheduler(t.deps, new ScheduleClock());
  try {
    await new Promise((r) => setTimeout(r, 1_500)); // past the first looks (the admitter's first admits: it starts not knowing)
    const sent = new Map<string, number>();
    const db = t.deps.db;
    const query = db.query.bind(db);
    db.query = ((text: string | pg.QueryConfig, params?: unknown[]) => {
      const name = typeof text === 'string' ? text.replace(/\s+/g, ' ').slice(0, 60) : (text.name ?? text.text.replace(/\s+/g, ' ').slice(0, 60));
      sent.set(name, (sent.get(name) ?? 0) + 1);
      return query(text, params);
    }) as typeof db.query;
    const seconds = 3.5;
    await new Promise((r) => setTimeout(r, seconds * 1000));
    db.query = query;
    expect([...sent.keys()].sort()).toEqual(['svc_look_at_schedules', 'svc_look_at_waits', 'svc_next_admitter_look']);
    // About one look a second each (each sleeps at most a second, and nothing nudges them).
    for (const [name, n] of sent) expect(n, name).toBeGreaterThanOrEqual(2);
    for (const [name, n] of sent) expect(n, name).toBeLessThanOrEqual(Math.ceil(seconds) + 1);
  } finally {
    await scheduler.stop();
  }
});
