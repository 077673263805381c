import type { CommandRow } from '../db/command.repo.ts';
import type { EventRow, ExecutionRow } from '../db/execution.repo.ts';
import type { PresentedCommand } from '../protocol.ts';

/** The execution status object of GET /api/executions/{id}. */
export function presentExecution(r: ExecutionRow) {
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
  };
}

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
