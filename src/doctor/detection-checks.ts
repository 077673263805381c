import * as v from 'valibot';
import type { Severity } from './outcome.ts';
import { plural } from '../plural.ts';

// What each detection playbook (playbooks/*.yaml) answers, and how it reads to a person: the
// playbook's one summary row is validated here, then turned into a finding with what to run next.

export const CHECK_NAMES = ['stuck_executions', 'dead_worker_claims', 'stranded_pending_commands', 'stale_worker_pools'] as const;
export type CheckName = (typeof CHECK_NAMES)[number];

export type Thresholds = { stuck_minutes: number; pending_seconds: number; worker_stale_seconds: number; limit: number };

/** What a check lists that is no anomaly: executions that wait on purpose (the first `limit` in `items`). */
export type Waiting = { count: number; items: Record<string, unknown>[] };

/**
 * A check that ran: `count` anomalies (the first `limit` of them in `items`), or none; and
 * what it saw that is as it should be (`waiting`), told so a person does not take it for stuck.
 */
export type Finding = {
  severity: Severity;
  count: number;
  summary: string;
  items: Record<string, unknown>[];
  next_steps: string[];
  execution_id: number;
  waiting?: Waiting;
};

const timestamp = v.string();
type SummaryRow = { count: number; items: Record<string, unknown>[] };
type RowSchema = v.GenericSchema<unknown, SummaryRow>;
const summaryRow = <T extends v.ObjectEntries>(item: T, extra: v.ObjectEntries = {}) =>
  v.looseObject({ count: v.pipe(v.number(), v.integer(), v.minValue(0)), items: v.array(v.looseObject(item)), ...extra });

// What an execution waits for (stuck_executions.yaml): a timer, a signal, a debounce window or a limit.
const waitsFor = {
  waits_for: v.nullable(v.picklist(['timer', 'signal', 'debounce', 'limit'])),
  signal: v.nullable(v.string()),
  limit_name: v.nullable(v.string()),
  until: v.nullable(timestamp),
};
const stuckRow = v.looseObject({
  ...summaryRow({
    execution_id: v.number(),
    path: v.string(),
    started_at: timestamp,
    last_progress_at: timestamp,
    idle_minutes: v.number(),
    // no_progress: it waits for nothing; else the wait that should have ended (its timekeeper, admitter or limit holders failed).
    reason: v.picklist(['no_progress', 'timer_overdue', 'signal_overdue', 'debounce_overdue', 'limit_holders_gone', 'limit_undefined']),
    ...waitsFor,
  }).entries,
  waiting: v.pipe(v.number(), v.integer(), v.minValue(0)),
  waiting_items: v.array(v.looseObject({ execution_id: v.number(), path: v.string(), started_at: timestamp, last_progress_at: timestamp, ...waitsFor })),
});
// `paused` (how many, and per item): optional, as a playbook registered by an older doctor answers without.
const deadClaimRow = v.looseObject({
  ...summaryRow({
    command_id: v.number(),
    execution_id: v.number(),
    step: v.string(),
    status: v.string(),
    worker_id: v.nullable(v.string()),
    reason: v.picklist(['unregistered', 'deregistered', 'silent']),
    silent_seconds: v.nullable(v.number()),
    paused: v.optional(v.boolean()),
  }).entries,
  paused: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0))),
});
const pendingRow = v.looseObject({ ...summaryRow({ command_id: v.number(), execution_id: v.number(), step: v.string(), waiting_seconds: v.number() }).entries, live_pools: v.number() });
const stalePoolRow = v.looseObject({ ...summaryRow({ name: v.string(), status: v.string(), silent_seconds: v.number() }).entries, live_pools: v.number() });

/** Says, of the stuck executions listed, how many were waiting for something that should have ended. */
function overdueNote(items: { reason: string }[]): string {
  const overdue = items.filter((i) => i.reason !== 'no_progress').length;
  return overdue ? ` (${overdue} of them past the end of a wait: a timer, a signal timeout or a debounce not fired, or a limit whose holders are gone or that is not defined)` : '';
}

type CheckSpec<S extends RowSchema> = {
  /** The file under playbooks/ (its metadata.path is the catalog path). */
  file: string;
  /** The workload keys the check takes from the thresholds. */
  inputs: (keyof Thresholds)[];
  /** The playbook's one summary row. */
  row: S;
  /** The finding of a check that found `count` > 0 (severity, summary and next steps). */
  describe(row: v.InferOutput<S>, t: Thresholds, server: string): { severity: Severity; summary: string; next_steps: string[] };
  /** What the check confirms when it finds nothing. */
  clear: string;
  /** What it saw that waits on purpose, for the checks that tell it apart from an anomaly. */
  waiting?(row: v.InferOutput<S>): Waiting;
};

type Check = {
  file: string;
  inputs: (keyof Thresholds)[];
  /** The finding in a check's execution result; undefined when that is not the summary row. */
  interpret(result: unknown, t: Thresholds, server: string, executionId: number): Finding | undefined;
};

// The playbook's execution result is its postgres task's data: `rows` holds the one summary row.
const spec = <S extends RowSchema>(s: CheckSpec<S>): Check => ({
  file: s.file,
  inputs: s.inputs,
  interpret(result, t, server, executionId) {
    const parsed = v.safeParse(v.looseObject({ rows: v.tuple([s.row]) }), result);
    if (!parsed.success) return undefined;
    const row = parsed.output.rows[0];
    const waiting = s.waiting?.(row);
    const also = waiting ? { waiting } : {};
    if (row.count === 0) {
      const summary = waiting?.count ? `${s.clear}; ${plural(waiting.count, 'execution')} ${waiting.count === 1 ? 'waits' : 'wait'} on purpose (a timer, a signal, a debounce window or a limit)` : s.clear;
      return { severity: 'ok', count: 0, summary, items: [], next_steps: [], execution_id: executionId, ...also };
    }
    return { ...s.describe(row, t, server), count: row.count, items: row.items, execution_id: executionId, ...also };
  },
});

export const CHECKS = {
  stuck_executions: spec({
    file: 'stuck_executions.yaml',
    inputs: ['stuck_minutes', 'worker_stale_seconds', 'limit'],
    row: stuckRow,
    clear: 'no execution is without progress',
    waiting: (row) => ({ count: row.waiting, items: row.waiting_items }),
    describe: (row, t, server) => ({
      severity: 'critical',
      summary: `${plural(row.count, 'execution')} ${row.count === 1 ? 'has' : 'have'} been running for over ${t.stuck_minutes} min with no progress${overdueNote(row.items)}`,
      next_steps: [
        `svc cleanup --older-than-minutes ${Math.max(1, Math.ceil(t.stuck_minutes))} --dry-run --server ${server}   # lists what a cleanup cancels; run it without --dry-run to cancel them`,
        // svc cancel sends SVC_API_TOKEN, as the doctor does: a bare curl is 401 where the server checks callers.
        `svc cancel ${row.items[0]?.execution_id ?? '<id>'} --server ${server}   # or cancel one (and its children)`,
      ],
    }),
  }),
  dead_worker_claims: spec({
    file: 'dead_worker_claims.yaml',
    inputs: ['worker_stale_seconds', 'limit'],
    row: deadClaimRow,
    clear: 'no command is held by a dead worker',
    describe: (row, t, server) => {
      // A paused execution's claim is taken over only after its resume: a repair gives it back to
      // the pause (withdrawn, its limit slot freed), and the resume issues it.
      const paused = row.paused ?? 0;
      const pausedId = row.items.find((i) => i.paused === true)?.execution_id;
      const whose = paused === row.count ? (paused === 1 ? 'its execution is paused' : 'their executions are paused') : `${plural(paused, 'of them is', 'of them are')} a paused execution's`;
      const note = paused ? ` (${whose}: no worker takes ${paused === 1 ? 'it' : 'them'} over until resumed)` : '';
      return {
        severity: 'critical',
        summary: `${plural(row.count, 'command')} ${row.count === 1 ? 'is' : 'are'} held by a worker pool that stopped or went quiet (no heartbeat for over ${t.worker_stale_seconds} s)${note}`,
        next_steps: [
          paused < row.count
            ? `svc doctor repair --server ${server}   # the reaper republishes them and a live worker claims them again${paused ? " (a paused execution's it gives back to the pause)" : ''}`
            : `svc doctor repair --server ${server}   # the reaper gives a paused execution's dead claim back to the pause (the timer's sweep does too)`,
          ...(paused ? [`svc resume ${pausedId ?? '<id>'} --server ${server}   # a paused execution's command runs again once it is resumed`] : []),
          `curl -s ${server}/api/worker/pools   # which pools are alive`,
        ],
      };
    },
  }),
  stranded_pending_commands: spec({
    file: 'stranded_pending_commands.yaml',
    inputs: ['pending_seconds', 'worker_stale_seconds', 'limit'],
    row: pendingRow,
    clear: 'no command waits unclaimed',
    describe: (row, t, server) => ({
      severity: 'critical',
      summary: `${plural(row.count, 'PENDING command')} ${row.count === 1 ? 'has' : 'have'} waited over ${t.pending_seconds} s for a worker (${plural(row.live_pools, 'live worker pool')})`,
      next_steps:
        row.live_pools === 0
          ? [`svc worker --server ${server}   # no worker pool is alive: start one`]
          : [`svc doctor repair --server ${server}   # republishes their notifications; if they still wait, the pools are busy (add workers)`],
    }),
  }),
  stale_worker_pools: spec({
    file: 'stale_worker_pools.yaml',
    inputs: ['worker_stale_seconds', 'limit'],
    row: stalePoolRow,
    clear: 'every registered worker pool heartbeats',
    describe: (row, t, server) => ({
      severity: 'warning',
      summary: `${plural(row.count, 'worker pool')} ${row.count === 1 ? 'is' : 'are'} registered but silent for over ${t.worker_stale_seconds} s (${plural(row.live_pools, 'live pool')})`,
      next_steps: [
        // The route takes only the worker token (every auth mode); printf is bash's own, so the
        // token reaches curl through a pipe, never its command line.
        `restart the pool if it should run (svc worker); if it is gone for good, deregister it with the worker token (SVC_WORKER_TOKEN; the embedded server's is in SVC_DATA_DIR/worker.token): curl -s -X POST ${server}/api/worker/pool/deregister -H @<(printf 'Authorization: Bearer %s\\n' "$SVC_WORKER_TOKEN") -H 'content-type: application/json' -d '{"name": "${row.items[0]?.name ?? '<name>'}"}'`,
      ],
    }),
  }),
} satisfies Record<CheckName, Check>;

/** The workload a check's playbook is started with: its thresholds, nothing else. */
export function checkPayload(name: CheckName, t: Thresholds): Record<string, number> {
  return Object.fromEntries(CHECKS[name].inputs.map((k) => [k, t[k]]));
}
