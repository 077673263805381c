import * as v from 'valibot';
import { table } from './api-command.ts';
import { runTimeText } from './executions-table.ts';
import { boundedText, errorText } from './logs-view.ts';
import { whenText } from './triggers-table.ts';

// `svc status`: GET /api/executions/{id} (with its waits) and GET /api/executions/{id}/state
// (each step's status) as one page a person reads. Statuses are text, as in the listing.

/** What a waiting step waits for: a timer (its wake-up time) or a signal (its timeout, if any, and who may send it). */
const Wait = v.looseObject({
  step: v.string(),
  kind: v.string(),
  signal: v.nullable(v.string()),
  wake_at: v.nullable(v.string()),
  approval_roles: v.nullable(v.array(v.string())),
});
/** GET /api/executions/{id}'s answer; `waits` only from servers that have waiting steps. */
export const ExecutionDetail = v.looseObject({
  execution_id: v.number(),
  path: v.string(),
  status: v.string(),
  progress: v.number(),
  result: v.optional(v.unknown()),
  error: v.optional(v.unknown()),
  parent_execution_id: v.optional(v.nullable(v.number())),
  started_at: v.string(),
  finished_at: v.nullable(v.string()),
  retry_of: v.optional(v.nullable(v.number())),
  retried_as: v.optional(v.array(v.number())),
  waits: v.optional(v.array(Wait)),
});
const StepView = v.looseObject({
  status: v.string(),
  loop: v.optional(v.looseObject({ length: v.number(), done: v.number(), in_flight: v.number() })),
  outcome: v.optional(v.looseObject({ status: v.string(), error: v.nullable(v.unknown()) })),
});
/** GET /api/executions/{id}/state's answer: each step's status, in the playbook's order. */
export const ExecutionState = v.looseObject({ steps: v.record(v.string(), StepView) });

type Detail = v.InferOutput<typeof ExecutionDetail>;
type Wait = v.InferOutput<typeof Wait>;
type Steps = v.InferOutput<typeof ExecutionState>['steps'];

/** What one wait is for: `signal approve (roles operator), times out 2026-…Z (in 59m)`, `timer 2026-…Z (in 30m)`. */
export function waitText(w: Wait, now: number): string {
  const when = w.wake_at ? whenText(w.wake_at, now) : undefined;
  if (w.kind !== 'signal') return `${w.kind}${when ? ` until ${when}` : ''}`;
  const roles = w.approval_roles?.length ? ` (roles ${w.approval_roles.join(', ')})` : '';
  return `signal ${w.signal ?? '?'}${roles}${when ? `, times out ${when}` : ''}`;
}

function stepRows(steps: Steps, waits: readonly Wait[], now: number): string[][] {
  return Object.entries(steps).map(([name, s]) => {
    const waiting = waits.filter((w) => w.step === name).map((w) => waitText(w, now));
    const loop = s.loop ? `${s.loop.done}/${s.loop.length} items done, ${s.loop.in_flight} in flight` : '';
    const outcome = s.outcome ? (s.outcome.error ? `${s.outcome.status}: ${errorText(s.outcome.error)}` : s.outcome.status) : '';
    return [name, s.status, boundedText([...waiting, loop, outcome].filter(Boolean).join('; ')) || '-'];
  });
}

/** The execution page: status, times, links, result or error, then its steps and what each waits for. */
export function statusText(d: Detail, steps: Steps | undefined, now = Date.now()): string {
  const rows: [string, string][] = [
    ['status', d.status],
    ['started', whenText(d.started_at, now)],
    ['finished', d.finished_at ? `${whenText(d.finished_at, now)}, after ${runTimeText(d, now)}` : `not yet (${runTimeText(d, now)})`],
    ['progress', `${d.progress}%`],
  ];
  if (d.parent_execution_id) rows.push(['parent', String(d.parent_execution_id)]);
  if (d.retry_of) rows.push(['retry of', String(d.retry_of)]);
  if (d.retried_as?.length) rows.push(['retried as', d.retried_as.join(', ')]);
  if (d.error !== undefined && d.error !== null) rows.push(['error', boundedText(errorText(d.error))]);
  if (d.result !== undefined && d.result !== null) rows.push(['result', boundedText(JSON.stringify(d.result))]);
  const waits = d.waits ?? [];
  // Steps come from the state; a wait of a step the state does not name still shows.
  const named = new Set(Object.keys(steps ?? {}));
  const orphans = waits.filter((w) => !named.has(w.step)).map((w) => [w.step, 'waiting', waitText(w, now)]);
  const stepTable = steps ? table([['STEP', 'STATUS', 'DETAIL'], ...stepRows(steps, waits, now), ...orphans]) : '';
  const width = Math.max(...rows.map(([k]) => k.length));
  return `execution ${d.execution_id} ${d.path}\n${rows.map(([k, value]) => `  ${k.padEnd(width)}  ${value}`).join('\n')}\n${stepTable ? `\n${stepTable}` : ''}`;
}
