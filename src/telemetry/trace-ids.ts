// The ids of an execution's trace, computed alike on every server and worker from what each
// already holds (execution ids, seqs, attempts, task names): W3C trace context ids, hex. Pure
// (node:crypto only), so the worker imports it without anything of the server. A span may start
// on one server and end on another, and a worker names the span its HTTP call belongs to without
// asking: each id is a hash of what the span is, never a random number kept somewhere.
import { createHash } from 'node:crypto';

/** What the ids hash besides the execution's numbers (SVC_TRACE_SALT; the same on servers and workers). */
export type TraceSalt = string;

function hex(salt: TraceSalt, parts: readonly (string | number)[], bytes: 8 | 16): string {
  const id = createHash('sha256').update(`svc-trace\u0000${salt}\u0000${parts.join('\u0000')}`).digest('hex').slice(0, bytes * 2);
  // An all-zero id is invalid in W3C trace context (2^-64 at worst; kept valid all the same).
  return /^0+$/.test(id) ? `${id.slice(0, -1)}1` : id;
}

/** The trace of a root execution and of every execution below it (32 hex). */
export const traceIdOf = (salt: TraceSalt, rootExecutionId: number): string => hex(salt, ['trace', rootExecutionId], 16);

/** The span of an execution, from `execution.started` to its end (16 hex). */
export const executionSpanId = (salt: TraceSalt, executionId: number): string => hex(salt, ['execution', executionId], 8);

/** The span of one run of a step (`run`: the machine's run number, 1 for the first `step.enter`). */
export const stepRunSpanId = (salt: TraceSalt, executionId: number, run: number): string => hex(salt, ['step', executionId, run], 8);

/** The span of a command (a step's worker tasks, or one loop item), from `command.issued` to its end. */
export const commandSpanId = (salt: TraceSalt, executionId: number, seq: number): string => hex(salt, ['command', executionId, seq], 8);

/** The span of a `playbook` task: from `child.started` to `child.finished` (the child execution's span is its child). */
export const childCallSpanId = (salt: TraceSalt, executionId: number, seq: number): string => hex(salt, ['child', executionId, seq], 8);

/** The span of one attempt of a task run by the claim `claimAttempt` of command `seq`. */
export const taskAttemptSpanId = (salt: TraceSalt, executionId: number, seq: number, claimAttempt: number, task: string, attempt: number): string =>
  hex(salt, ['task', executionId, seq, claimAttempt, attempt, task], 8);

/** A W3C `traceparent` header value (version 00, sampled). */
export const traceparent = (traceId: string, spanId: string): string => `00-${traceId}-${spanId}-01`;
