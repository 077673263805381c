import type pg from 'pg';
import { expect } from 'vitest';
import type { HttpTarget } from './http-target.ts';
import { until } from './until.ts';

/**
 * Waits until every execution of `ids` completed, then checks each completed its step `s1` once,
 * no report of it was given up (`report_rejected`), and its call to `target`'s `/hold?e=<id>` was
 * made once: what a database fault must leave of executions whose commands were running.
 */
export async function expectHeldCallsCompletedOnce(db: pg.Client, target: HttpTarget, ids: readonly number[]): Promise<void> {
  await until('both executions completed', async () => {
    const { rows } = await db.query(`SELECT count(*)::int AS n FROM core.execution WHERE execution_id = ANY($1) AND status = 'completed'`, [ids]);
    return rows[0].n === ids.length;
  }, 40_000, 200);
  for (const id of ids) {
    const { rows } = await db.query('SELECT event_type, step, context::text AS context FROM core.event WHERE execution_id = $1 ORDER BY event_id', [id]);
    expect(rows.filter((r) => r.event_type === 'command.completed').map((r) => r.step), `execution ${id}`).toEqual(['s1']);
    expect(rows.some((r) => String(r.context).includes('report_rejected')), `execution ${id}`).toBe(false);
    expect(target.requests.filter((r) => r.path === '/hold' && Number(r.query.e) === id).length, `execution ${id}: the call made once`).toBe(1);
  }
}
