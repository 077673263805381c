import * as v from 'valibot';
import { COMMAND_STATUSES } from '../../machines/command.machine.ts';
import { EXECUTION_STATUSES } from '../../machines/statuses.ts';
import type { CommandRow } from '../db/command.repo.ts';
import type { EventRow, ExecutionRow } from '../db/execution.repo.ts';
import type { PresentedCommand } from '../protocol.ts';
import { integer, time } from './answers.ts';

// Rows as the API presents them, each with the schema its routes document it by (answers.ts).

const executionStatus = v.picklist(EXECUTION_STATUSES);

export const executionAnswer = v.object({
  execution_id: integer,
  status: executionStatus,
  path: v.string(),
  progress: v.number(),
  result: v.pipe(v.unknown(), v.description('the result of a completed execution; null before')),
  error: v.pipe(v.unknown(), v.description('`{message, code?}` of a failed execution; null otherwise')),
  catalog_id: integer,
  parent_execution_id: v.nullable(integer),
  root_execution_id: integer,
  last_event_id: integer,
  started_at: time,
  updated_at: time,
  finished_at: v.nullable(time),
  admitted_at: v.pipe(
    v.nullable(time),
    v.description('when flow control admitted it, after it waited `queued` (its first `execution.admitted`); null when it never waited (its start admitted it) or waits still. Its run time is from here, else from `started_at`'),
  ),
});

/** The execution status object of GET /api/executions/{id}. */
export function presentExecution(r: ExecutionRow & { admitted_at: string | null }): v.InferOutput<typeof executionAnswer> {
  return {
    execution_id: r.execution_id,
    status: r.status,
    path: r.path,
    progress: r.progress,
    result: r.result ?? null,
    error: r.error ?? null,
    catalog_id: r.catalog_id,
    parent_execution_id: r.parent_execution_id,
    root_execution_id: r.root_execution_id,
    last_event_id: r.last_event_id,
    started_at: r.started_at.toISOString(),
    updated_at: r.updated_at.toISOString(),
    finished_at: r.finished_at?.toISOString() ?? null,
    admitted_at: r.admitted_at,
  };
}

export const eventAnswer = v.object({
  execution_id: integer,
  event_id: integer,
  catalog_id: integer,
  event_type: v.string(),
  status: v.pipe(executionStatus, v.description("the execution's status after the event")),
  step: v.nullable(v.string()),
  command_id: v.nullable(integer),
  worker_id: v.nullable(v.string()),
  context: v.unknown(),
  result: v.unknown(),
  error: v.unknown(),
  created_at: time,
});

export function presentEvent(e: EventRow) {
  return {
    execution_id: e.execution_id,
    event_id: e.event_id,
    catalog_id: e.catalog_id,
    event_type: e.event_type,
    status: e.status,
    step: e.step,
    command_id: e.command_id,
    worker_id: e.worker_id,
    context: e.context,
    result: e.result,
    error: e.error,
    created_at: e.created_at,
  };
}

export const commandAnswer = v.object({
  command_id: integer,
  execution_id: integer,
  catalog_id: integer,
  path: v.nullable(v.string()),
  step: v.string(),
  seq: integer,
  loop_index: v.nullable(integer),
  status: v.picklist(COMMAND_STATUSES),
  attempt: integer,
  worker_id: v.nullable(v.string()),
  tasks: v.array(v.unknown()),
  context: v.pipe(v.unknown(), v.description('what the tasks render with')),
  keychain: v.array(v.unknown()),
}) satisfies v.GenericSchema<unknown, PresentedCommand>;

/** A claimed command as a worker receives it: what to run and the context to render it with. */
export function presentCommand(c: CommandRow): PresentedCommand {
  const input = (c.input ?? {}) as { path?: string; tasks?: unknown[]; context?: unknown; keychain?: unknown[] };
  return {
    command_id: c.command_id,
    execution_id: c.execution_id,
    catalog_id: c.catalog_id,
    path: input.path ?? null,
    step: c.step,
    seq: c.seq,
    loop_index: c.loop_index,
    status: c.status,
    attempt: c.attempt,
    worker_id: c.worker_id,
    tasks: input.tasks ?? [],
    context: input.context ?? {},
    keychain: input.keychain ?? [],
  };
}
