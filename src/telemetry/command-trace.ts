// The worker's share of traces: while a claimed command runs, which span its tasks' calls belong
// to, so that the http tool sends `traceparent` and the service it calls joins the execution's
// trace. Nothing here asks the server: the ids follow from the command as presented (execution,
// seq, claim attempt, the root execution in its context) and the attempt of the task, counted here.
// Off (the default: no OTLP endpoint in the worker's environment), a command runs as it is, and no
// store exists.
import { AsyncLocalStorage } from 'node:async_hooks';
import type { PresentedCommand } from '../protocol.ts';
import { taskAttemptSpanId, traceIdOf, traceparent } from './trace-ids.ts';
import { traceSwitchOf, tracesUrl } from './trace-switch.ts';

type Scope = { salt: string; traceId: string; executionId: number; seq: number; claimAttempt: number; tries: Map<string, number> };

type Env = Readonly<Record<string, string | undefined>>;

let storage: AsyncLocalStorage<Scope> | undefined;
// The environment last asked about and what it said (a pool asks with the same object each time).
let decidedFor: Env | undefined;
let salt: string | null = null;

/** The salt of trace ids when `env` turns traces on, else null (decided once per environment object). */
function saltOf(env: Env): string | null {
  if (env !== decidedFor) {
    decidedFor = env;
    salt = tracesUrl(traceSwitchOf(env)) ? (env.SVC_TRACE_SALT ?? '').trim() : null;
  }
  return salt;
}

/** The root execution a command's context names (`execution.root_id`), else the command's own execution. */
function rootOf(cmd: PresentedCommand): number {
  const ctx = cmd.context as { execution?: { root_id?: unknown } } | null;
  const root = ctx?.execution?.root_id;
  return typeof root === 'number' && Number.isSafeInteger(root) ? root : cmd.execution_id;
}

/** Runs a command's work inside its trace scope when the worker's environment turns traces on. */
export function inCommandTrace<T>(env: Env, cmd: PresentedCommand, run: () => T): T {
  const s = saltOf(env);
  if (s === null) return run();
  storage ??= new AsyncLocalStorage<Scope>();
  return storage.run({ salt: s, traceId: traceIdOf(s, rootOf(cmd)), executionId: cmd.execution_id, seq: cmd.seq, claimAttempt: cmd.attempt, tries: new Map() }, run);
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
