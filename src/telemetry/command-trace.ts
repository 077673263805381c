// The worker's share of traces: while a claimed command runs, which span its tasks' calls belong
// to, so that the http tool sends `traceparent` and the service it calls joins the execution's
// trace. Nothing here asks the server: the ids follow from the command as presented (execution,
// seq, claim attempt, the root execution in its context) and the attempt of the task, counted here.
// Off (the default: no OTLP endpoint in the worker's config), a command runs as it is, and no
// store exists.
import { AsyncLocalStorage } from 'node:async_hooks';
import type { PresentedCommand } from '../protocol.ts';
import { taskAttemptSpanId, traceIdOf, traceparent } from './trace-ids.ts';

/** A pool's traces when on: the salt of trace ids (SVC_TRACE_SALT). From workerTraces(config), as the server decides its own. */
export type CommandTraces = { readonly salt: string };

type Scope = { salt: string; traceId: string; executionId: number; seq: number; claimAttempt: number; tries: Map<string, number> };

let storage: AsyncLocalStorage<Scope> | undefined;

/** The root execution a command's context names (`execution.root_id`), else the command's own execution. */
function rootOf(cmd: PresentedCommand): number {
  const ctx = cmd.context as { execution?: { root_id?: unknown } } | null;
  const root = ctx?.execution?.root_id;
  return typeof root === 'number' && Number.isSafeInteger(root) ? root : cmd.execution_id;
}

/** Runs a command's work inside its trace scope when traces are on (`traces` given). */
export function inCommandTrace<T>(traces: CommandTraces | undefined, cmd: PresentedCommand, run: () => T): T {
  if (traces === undefined) return run();
  const { salt } = traces;
  storage ??= new AsyncLocalStorage<Scope>();
  return storage.run({ salt, traceId: traceIdOf(salt, rootOf(cmd)), executionId: cmd.execution_id, seq: cmd.seq, claimAttempt: cmd.attempt, tries: new Map() }, run);
}

/**
 * The `traceparent` of the attempt of task `task` about to run (each call is the next attempt: a
 * tool is called once per attempt), or undefined outside a traced command.
 */
export function nextAttemptTraceparent(task: string): string | undefined {
  const scope = storage?.getStore();
  if (!scope) return undefined;
  const attempt = (scope.tries.get(task) ?? 0) + 1;
  scope.tries.set(task, attempt);
  return traceparent(scope.traceId, taskAttemptSpanId(scope.salt, scope.executionId, scope.seq, scope.claimAttempt, task, attempt));
}
