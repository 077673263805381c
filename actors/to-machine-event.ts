import { EVENT } from '../machines/event-types.ts';
import type { ExecutionEvent, TaskError, TaskOutcome } from '../machines/execution/types.ts';
import type { EventRow } from '../src/db/execution.repo.ts';
import { isRole } from '../src/auth/roles.ts';
import { asObject, isObject } from '../src/objects.ts';

function taskError(v: unknown): TaskError {
  const o = asObject(v);
  return { message: typeof o.message === 'string' ? o.message : 'failed', ...(typeof o.code === 'string' ? { code: o.code } : {}) };
}

function tasksOf(v: unknown): Record<string, TaskOutcome> {
  const out: Record<string, TaskOutcome> = {};
  for (const [name, raw] of Object.entries(asObject(asObject(v).tasks))) {
    const t = asObject(raw);
    out[name] = {
      status: t.status === 'ok' ? 'ok' : 'error',
      data: t.data ?? null,
      ...(t.status === 'ok' ? {} : { error: taskError(t.error) }),
    };
  }
  return out;
}

const nameOrNull = (v: unknown): v is string | null => v === null || typeof v === 'string';

/** The limit, key and priority an `execution.admitted` recorded (its context), or undefined in a log written before it recorded them. */
function admittedFlow(ctx: Record<string, unknown>): { limit: string | null; key: string | null; priority: number } | undefined {
  const { limit, key, priority } = ctx;
  if (!nameOrNull(limit) || !nameOrNull(key) || typeof priority !== 'number' || !Number.isInteger(priority)) return undefined;
  return { limit, key, priority };
}

/**
 * Whether routing marked a report (its context) late or refused: kept for the record, folded by
 * nothing. Every reader of the log that follows the machine skips it (the step-runs view too).
 */
export function isRecordedOnly(context: Record<string, unknown>): boolean {
  return context.late === true || typeof context.refused === 'string';
}

/**
 * A taken report's context without the marks isRecordedOnly reads: they are routing's to write. A
 * worker's own `late: true` was stored as it came, and its report, which moved the command, then
 * folded into nothing: the step never ended, the execution ran on with nothing left to run.
 */
export function withoutRecordMarks(context: unknown): Record<string, unknown> {
  const ctx = asObject(context);
  // Every report of every step comes here: copied only when a mark is there to leave out.
  if (!Object.hasOwn(ctx, 'late') && !Object.hasOwn(ctx, 'refused')) return ctx;
  const { late: _late, refused: _refused, ...rest } = ctx;
  return rest;
}

/**
 * The machine event an event-log row stands for, or null for rows that only record (step.enter,
 * command.issued, call.done, …). The same function serves live routing and replay, so both fold alike.
 */
export function toMachineEvent(row: Pick<EventRow, 'event_type' | 'context' | 'result' | 'error'>): ExecutionEvent | null {
  const ctx = asObject(row.context);
  // A report about a command that was already over is kept for the record and moves nothing; so
  // is one from a claim taken over since, in logs written before such reports were recorded as
  // `command.refused` (which no case below folds).
  if (isRecordedOnly(ctx)) return null;
  const seq = typeof ctx.seq === 'number' ? ctx.seq : -1;
  switch (row.event_type) {
    case EVENT.commandCompleted:
      return { type: EVENT.commandCompleted, seq, tasks: tasksOf(row.result) };
    case EVENT.commandFailed:
      return { type: EVENT.commandFailed, seq, error: taskError(row.error), tasks: tasksOf(row.result) };
    case EVENT.childFinished: {
      const status = ctx.status === 'completed' || ctx.status === 'cancelled' ? ctx.status : 'failed';
      return {
        type: EVENT.childFinished,
        seq,
        // null: the task started no child (its path not found, its args refused, too deep).
        child_execution_id: typeof ctx.child_execution_id === 'number' ? ctx.child_execution_id : null,
        status,
        result: row.result ?? null,
        error: row.error ? taskError(row.error) : null,
      };
    }
    case EVENT.executionCancelled:
      return { type: EVENT.executionCancelled, reason: typeof ctx.reason === 'string' ? ctx.reason : 'cancelled', cancelled_at: String(ctx.cancelled_at ?? ''), ...(ctx.cascade === false ? { cascade: false } : {}), ...(isObject(ctx.requested_by) ? { requestedBy: ctx.requested_by } : {}) };
    case EVENT.timerFired:
    case EVENT.waitTimedOut:
      return { type: row.event_type, seq };
    case EVENT.signalReceived:
      // `seq` absent: kept for a step that waits later (buffer: true).
      return {
        type: EVENT.signalReceived,
        seq: typeof ctx.seq === 'number' ? ctx.seq : null,
        signal: {
          name: String(ctx.signal ?? ''),
          payload: row.result ?? null,
          by: typeof ctx.by === 'string' ? ctx.by : null,
          // Absent in logs written before signals recorded their sender's role: folded as then.
          ...(Object.hasOwn(ctx, 'role') ? { role: isRole(ctx.role) ? ctx.role : null } : {}),
        },
      };
    case EVENT.executionAdmitted: {
      const flow = admittedFlow(ctx);
      return { type: EVENT.executionAdmitted, ...(isObject(row.result) ? { args: row.result } : {}), ...(flow ? { flow } : {}) };
    }
    case EVENT.executionPaused:
    case EVENT.executionResumed:
      return { type: row.event_type };
    default:
      return null;
  }
}
