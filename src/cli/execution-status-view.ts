import * as v from 'valibot';
import { table } from './api-command.ts';
import { spanText, type ExecutionItem } from './executions-table.ts';
import { boundedText, errorText } from './logs-view.ts';
import { taskTimerText } from './task-timer-text.ts';
import { whenText } from './triggers-table.ts';
import { ownKeysRecord } from '../own-keys-record.ts';

// `svc status`: GET /api/executions/{id} (with its waits) and GET /api/executions/{id}/state
// (each step's status) as one page a person reads, with its children (GET /api/executions?parent=)
// so that a step failed by a child names the child to look at. Statuses are text, as in the listing.

/** What a waiting step waits for: a timer (its wake-up time) or a signal (its timeout, if any, and who may send it). */
const Wait = v.looseObject({
  step: v.string(),
  kind: v.string(),
  signal: v.nullable(v.string()),
  wake_at: v.nullable(v.string()),
  approval_roles: v.nullable(v.array(v.string())),
  // Absent from servers before it was answered.
  since: v.optional(v.string()),
});
/** Its admission (flow control): the limit and key it is queued on or holds a slot of, its debounce window's close. */
const Flow = v.looseObject({
  limit: v.nullable(v.string()),
  key: v.nullable(v.string()),
  priority: v.number(),
  // Absent from servers before it was answered: taken as defined.
  defined: v.optional(v.boolean()),
  not_before: v.nullable(v.string()),
  queued_at: v.string(),
  admitted_at: v.nullable(v.string()),
});
/** A command of the execution waiting for room on its task's limit. */
const LimitWait = v.looseObject({ step: v.string(), limit: v.string(), key: v.string(), defined: v.optional(v.boolean()), since: v.string() });
/** GET /api/executions/{id}'s answer; `waits` only from servers that have waiting steps, `flow` and `limit_waits` from those with flow control. */
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
  resumed_from: v.optional(v.nullable(v.number())),
  resumed_as: v.optional(v.nullable(v.number())),
  retried_as: v.optional(v.array(v.number())),
  waits: v.optional(v.array(Wait)),
  waits_count: v.optional(v.number()),
  flow: v.optional(v.nullable(Flow)),
  limit_waits: v.optional(v.array(LimitWait)),
  limit_waits_count: v.optional(v.number()),
});
const StepView = v.looseObject({
  status: v.string(),
  loop: v.optional(v.looseObject({ length: v.number(), done: v.number(), in_flight: v.number() })),
  outcome: v.optional(v.looseObject({ status: v.string(), error: v.nullable(v.unknown()) })),
  // Absent from servers before it was answered, and of a step the pause holds nothing of.
  held: v.optional(v.number()),
  held_children: v.optional(v.number()),
  // How many of its runs a retry replayed; absent from servers before it was answered, and when none.
  replayed: v.optional(v.number()),
});
/** A signal kept for a step that says `buffer: true` (no step waited for it when it came). */
const KeptSignal = v.looseObject({ signal: v.string(), by: v.nullable(v.string()) });
/** GET /api/executions/{id}/state's answer: each step's status, in the playbook's order; `kept_signals` from servers that answer it. */
export const ExecutionState = v.looseObject({ steps: ownKeysRecord(v.string(), StepView), step_order: v.optional(v.array(v.string())), kept_signals: v.optional(v.array(KeptSignal)) });

type Detail = v.InferOutput<typeof ExecutionDetail>;
type Wait = v.InferOutput<typeof Wait>;
type Flow = v.InferOutput<typeof Flow>;
type LimitWait = v.InferOutput<typeof LimitWait>;
type Steps = v.InferOutput<typeof ExecutionState>['steps'];
type KeptSignal = v.InferOutput<typeof KeptSignal>;

/**
 * The signals kept for a later step, by name in order: `go (by alice, by bob), stop (by local)`.
 * A step that waits for one takes the oldest; of a finished execution, no step took them.
 */
export function keptSignalsText(kept: readonly KeptSignal[]): string {
  const byName = new Map<string, string[]>();
  for (const k of kept) byName.set(k.signal, [...(byName.get(k.signal) ?? []), `by ${k.by ?? 'nobody'}`]);
  return [...byName].map(([name, by]) => `${name} (${by.join(', ')})`).join(', ');
}

/**
 * What one wait is for: `signal approve (roles operator), times out 2026-…Z (in 59m)`, `timer until
 * 2026-…Z (in 30m)`; a `playbook` task's own timer by purpose: `playbook task kid: timeout at …`,
 * `retry 2 of kid at …`. Of a paused execution, a time already past is held for the resume, not
 * late: `timer until … (5m ago): due, fires once resumed` (a signal's: `times out once resumed`).
 * A step's own wait ends with since when it waits: `, waiting since 2026-…Z (2h ago)`.
 */
export function waitText(w: Wait, now: number, paused = false): string {
  const when = w.wake_at ? whenText(w.wake_at, now) : undefined;
  const held = paused && w.wake_at !== null && Date.parse(w.wake_at) <= now ? `: due, ${w.kind === 'signal' && !taskTimerText(w) ? 'times out' : 'fires'} once resumed` : '';
  const task = taskTimerText(w);
  if (task) return `${task}${when ? ` at ${when}` : ''}${held}`;
  // A signal wait without timeout said nothing of its age: a minute and a week read the same.
  const since = w.since ? `, waiting since ${whenText(w.since, now)}` : '';
  if (w.kind !== 'signal') return `${w.kind}${when ? ` until ${when}` : ''}${held}${since}`;
  const roles = w.approval_roles?.length ? ` (roles ${w.approval_roles.join(', ')})` : '';
  return `signal ${w.signal ?? '?'}${roles}${when ? `, times out ${when}` : ''}${held}${since}`;
}

/**
 * A limit's key as the CLI shows it: quoted (`"acme"`), and the empty key (a limit without `key:`)
 * named `(empty key)` as the console's timeline and Waits-for panel name it, not `""`.
 */
export const keyText = (key: string): string => (key === '' ? '(empty key)' : JSON.stringify(key));

// A limit named but not defined holds its work for ever (a typo): said where its work waits, not taken for a full one.
const NOT_DEFINED = ' (not defined: its work waits until it is)';

/**
 * What its admission says: `queued on limit tenant key "acme", priority 5, since …` (and a
 * debounce window's close, or that the limit is not defined; `paused`: held in its place until
 * resumed), or once admitted `admitted …, holds a slot of limit tenant key "acme"`.
 */
export function flowText(f: Flow, now: number, paused = false): string {
  const on = f.limit === null ? '' : `limit ${f.limit} key ${keyText(f.key ?? '')}`;
  if (f.admitted_at !== null) return `admitted ${whenText(f.admitted_at, now)}${on ? `, holds a slot of ${on}` : ''}`;
  const window = f.not_before !== null && Date.parse(f.not_before) > now ? `, debounce window closes ${whenText(f.not_before, now)}` : '';
  const held = paused ? ' (paused: keeps its place, not admitted until resumed)' : '';
  return `queued${on ? ` on ${on}${f.defined === false ? NOT_DEFINED : ''}` : ''}, priority ${f.priority}, since ${whenText(f.queued_at, now)}${window}${held}`;
}

/** What a limited command waits for: `room on limit partner-api key "acme" since … (3.0s ago)`. */
export function limitWaitText(w: LimitWait, now: number): string {
  return `room on limit ${w.limit} key ${keyText(w.key)}${w.defined === false ? NOT_DEFINED : ''} since ${whenText(w.since, now)}`;
}

/**
 * A step's commands waiting for room, one phrase per limit and key (the oldest's since): a loop's
 * items wait on one key, and a phrase each cut the line before the loop's count showed.
 */
function limitWaitsText(ws: readonly LimitWait[], now: number): string[] {
  const groups = new Map<string, LimitWait[]>();
  for (const w of ws) {
    const k = JSON.stringify([w.limit, w.key]);
    groups.set(k, [...(groups.get(k) ?? []), w]);
  }
  return [...groups.values()].map((g) => {
    const oldest = g.reduce((a, b) => (Date.parse(b.since) < Date.parse(a.since) ? b : a));
    return g.length === 1 ? limitWaitText(oldest, now) : `${g.length} commands wait for ${limitWaitText(oldest, now)}`;
  });
}

/**
 * The steps in the playbook's order (`order`, the state's `step_order`): an object's keys are not
 * (a step named `2` came first, before `build` that ran before it); any it does not name after.
 */
function inOrder(steps: Steps, order: readonly string[]): [string, Steps[string]][] {
  const named = order.filter((name) => Object.hasOwn(steps, name));
  const listed = new Set(named);
  return [...named, ...Object.keys(steps).filter((name) => !listed.has(name))].map((name) => [name, steps[name]]);
}

// A step's detail: twice a log line's, as one signal wait with roles, timeout and its age (since)
// is longer than 120 characters, and a cut there dropped the age, what the line is read for.
const STEP_DETAIL_CHARS = 240;

function stepRows(steps: Steps, order: readonly string[], waits: readonly Wait[], limitWaits: readonly LimitWait[], now: number, paused: boolean, replayedFrom: number | null): string[][] {
  return inOrder(steps, order).map(([name, s]) => {
    const waiting = waits.filter((w) => w.step === name).map((w) => waitText(w, now, paused));
    const stepLimitWaits = limitWaits.filter((w) => w.step === name);
    // The machine counts an item in flight from its command's issue; one whose command waits for
    // room on a task's limit (the API's limit_waits) runs nowhere: it is waiting, as flow control
    // names it. Of a list cut at the server's bound the count is of those listed.
    const forRoomCount = Math.min(stepLimitWaits.length, s.loop?.in_flight ?? 0);
    const loop = s.loop ? `${s.loop.done}/${s.loop.length} items done, ${s.loop.in_flight - forRoomCount} in flight${forRoomCount ? `, ${forRoomCount} waiting` : ''}` : '';
    const outcome = s.outcome ? (s.outcome.error ? `${s.outcome.status}: ${errorText(s.outcome.error)}` : s.outcome.status) : '';
    // The loop's count before its items' waits for room: short, and what a reader looks for first.
    const forRoom = limitWaitsText(stepLimitWaits, now);
    // The view's count of what the pause holds: an active step of which nothing runs says so.
    const held = s.held ? heldText(s.held - (s.held_children ?? 0), s.held_children ?? 0) : '';
    // Its outcome is the retried execution's (its tasks ran there, not here): it read as if it ran again.
    const replayed = s.replayed ? `replayed from ${replayedFrom ?? 'the execution retried'}${s.replayed > 1 ? ` (${s.replayed} runs)` : ''}` : '';
    return [name, s.status, boundedText([replayed, held, ...waiting, loop, ...forRoom, outcome].filter(Boolean).join('; '), STEP_DETAIL_CHARS) || '-'];
  });
}

/** Its children as the status page names them: `3 (a/child, failed), 4 (a/child, running)`, `… N in all` past the first page. */
export function childrenText(children: readonly ExecutionItem[], total: number): string {
  const shown = children.map((c) => `${c.execution_id} (${c.path}, ${c.status})`).join(', ');
  return total > children.length ? `${shown}, … ${total} in all (svc list --parent)` : shown;
}

/** `5000 commands wait for room on a limit in all, the first 100 below`; '' when all are listed. */
function moreText(total: number | undefined, listed: number, what: string): string {
  return total !== undefined && total > listed ? `${total} ${what} in all, the first ${listed} below` : '';
}

/** The execution page: status, times, links, result or error, then its steps and what each waits for. */
export function statusText(d: Detail, steps: Steps | undefined, now = Date.now(), children?: { items: readonly ExecutionItem[]; total: number }, kept: readonly KeptSignal[] = [], order: readonly string[] = []): string {
  const rows: [string, string][] = [
    ['status', d.status],
    ['started', whenText(d.started_at, now)],
    ['finished', d.finished_at ? `${whenText(d.finished_at, now)}, after ${spanText(d.started_at, d.finished_at, now)}` : `not yet (${spanText(d.started_at, null, now)})`],
    ['progress', `${d.progress}%`],
  ];
  if (d.flow) rows.push(['flow', flowText(d.flow, now, d.status === 'paused')]);
  if (d.parent_execution_id) rows.push(['parent', String(d.parent_execution_id)]);
  if (children?.items.length) rows.push(['children', childrenText(children.items, children.total)]);
  if (d.retry_of) rows.push(['retry of', String(d.retry_of)]);
  if (d.retried_as?.length) rows.push(['retried as', d.retried_as.join(', ')]);
  if (d.resumed_from) rows.push(['resumed from', `${d.resumed_from} (auto-resume restarted it)`]);
  if (d.resumed_as) rows.push(['resumed as', `${d.resumed_as} (auto-resume restarted this one as it)`]);
  if (d.error !== undefined && d.error !== null) rows.push(['error', boundedText(errorText(d.error))]);
  if (d.result !== undefined && d.result !== null) rows.push(['result', boundedText(JSON.stringify(d.result))]);
  // Acknowledged (202 buffered) and waiting for a step: seen nowhere else but the log, and lost with the execution's end.
  if (kept.length) rows.push([d.finished_at ? 'signals never taken' : 'signals kept', boundedText(keptSignalsText(kept))]);
  const waits = d.waits ?? [];
  const paused = d.status === 'paused';
  // Steps come from the state; a wait of a step the state does not name still shows.
  const named = new Set(Object.keys(steps ?? {}));
  const limitWaits = d.limit_waits ?? [];
  const orphans = [
    ...waits.filter((w) => !named.has(w.step)).map((w) => [w.step, 'waiting', waitText(w, now, paused)]),
    ...[...new Set(limitWaits.filter((w) => !named.has(w.step)).map((w) => w.step))].map((step) => [step, 'pending', boundedText(limitWaitsText(limitWaits.filter((w) => w.step === step), now).join('; '))]),
  ];
  // The server lists the first of many (a parallel loop on a limit queues one command an item).
  const more = [
    moreText(d.waits_count, waits.length, 'waits'),
    moreText(d.limit_waits_count, limitWaits.length, 'commands wait for room on a limit'),
  ].filter(Boolean);
  if (more.length) rows.push(['waiting', more.join('; ')]);
  const stepTable = steps ? table([['STEP', 'STATUS', 'DETAIL'], ...stepRows(steps, order, waits, limitWaits, now, paused, d.retry_of ?? d.resumed_from ?? null), ...orphans]) : '';
  const width = Math.max(...rows.map(([k]) => k.length));
  return `execution ${d.execution_id} ${d.path}\n${rows.map(([k, value]) => `  ${k.padEnd(width)}  ${value}`).join('\n')}\n${stepTable ? `\n${stepTable}` : ''}`;
}

/** What the pause holds of a step: commands issued, child executions (a `playbook` task's) started, once resumed. */
function heldText(commands: number, children: number): string {
  const parts = [commands && `${commands} ${commands === 1 ? 'command' : 'commands'} issued`, children && `${children} child ${children === 1 ? 'execution' : 'executions'} started`].filter(Boolean);
  return `held (paused): ${parts.join(' and ')} once resumed`;
}
