import { CODE } from '../machines/error-codes.ts';
import { EVENT } from '../machines/event-types.ts';
import type { Effect } from '../machines/execution.machine.ts';
import { COMMAND_RULES } from '../machines/command-rules.ts';
import { scopesRemovedWhenFinished } from '../machines/keychain-owner-finished.ts';
import type { EventInput } from '../src/protocol.ts';
import { invalidInputs } from '../src/dsl/invalid-inputs.ts';
import { admissionOf } from '../src/flow/admission-of.ts';
import { undebounced } from '../src/flow/undebounced.ts';
import { FlowKeyError } from '../machines/flow-key.ts';
import { errorOf } from '../machines/execution/arcs.ts';
import { tokenToSeal } from '../src/secret-handle.ts';
import type { EffectHost, Subject, UnitRows } from './unit-types.ts';
import { admitKeyOf, roomKey } from './key-rooms.ts';
import { startedKey } from './prefetch.ts';

/** How many levels of `playbook` task children an execution may have under it. */
export const MAX_CHILD_DEPTH = 32;

/**
 * Turns the effects one transition of `h` returned into rows (events, commands, cancels, keychain
 * cleanup, children, deliveries), synchronously: what an effect needs from the database comes
 * from `host.reads`; when it is not there, the need is noted in `host.needs` and the effect left
 * out (the fold is redone once it is read).
 */
export function effectRows(host: EffectHost, h: Subject, effects: readonly Effect[]): void {
  const rows = host.rows;
  for (const e of effects) {
    switch (e.type) {
      case 'record':
        host.push(h, { event_type: e.eventType, step: e.step, context: e.context, result: e.result, error: e.error });
        break;
      case 'issueCommand': {
        rows.commands.push({
          execution_id: h.id,
          catalog_id: h.row.catalog_id,
          seq: e.seq,
          step: e.step,
          loop_index: e.loopIndex,
          status: COMMAND_RULES.initial,
          input: { path: h.row.path, tasks: e.tasks, context: e.context, keychain: e.keychain },
          worker_id: null,
          claim_token: null,
          priority: e.priority,
          limit_name: e.limit?.name ?? null,
          limit_key: e.limit?.key ?? null,
        });
        // The command_id is joined in by the write statement, which inserts both.
        host.push(h, { event_type: EVENT.commandIssued, step: e.step, context: { seq: e.seq, loop_index: e.loopIndex } }).issued_seq = e.seq;
        break;
      }
      case 'cancelCommands': {
        const seqs = new Set(e.seqs);
        const insertedHere = new Set<number>();
        for (const c of rows.commands) {
          if (c.execution_id !== h.id || !seqs.has(c.seq)) continue;
          c.status = COMMAND_RULES.cancel.to; // issued and cancelled in this same unit: never offered to a worker
          insertedHere.add(c.seq);
        }
        for (const seq of e.seqs) if (!insertedHere.has(seq)) rows.cancels.push({ execution_id: h.id, seq });
        host.push(h, { event_type: EVENT.commandCancelled, context: { seqs: e.seqs } });
        break;
      }
      case 'startChild': {
        // Children start in the unit that decides them, their own first children too: a chain
        // is folded here level by level, and one that starts itself would never end.
        const depth = (h.snapshot?.context.input.depth ?? 0) + 1;
        if (depth > MAX_CHILD_DEPTH) {
          host.send(h.id, childResult(e.seq, null, 'failed', null, { message: `playbook task ${e.step}.${e.task}: its child ${e.path} would be nested ${depth} levels under execution ${h.row.root_execution_id}, past the limit of ${MAX_CHILD_DEPTH}`, code: CODE.child_too_deep }, e));
          break;
        }
        const entry = host.reads.catalog.get(e.path);
        if (entry === undefined) {
          // Its id is read with it (an id taken and then unused is a harmless gap).
          host.needs.paths.add(e.path);
          host.needs.ids++;
          break;
        }
        if (entry === null) {
          host.send(h.id, childResult(e.seq, null, 'failed', null, { message: `playbook ${e.path} not found in the catalog`, code: CODE.not_found }, e));
          break;
        }
        // An MCP server document shares the catalog but is never run: no playbook is there.
        if (entry.kind === 'mcp') {
          host.send(h.id, childResult(e.seq, null, 'failed', null, { message: `${e.path} is an MCP server document (kind Mcp), not a playbook`, code: CODE.not_found }, e));
          break;
        }
        // A child whose args fail its inputs is not started: the task fails naming each field.
        const compiled = host.compile(entry);
        const refused = invalidInputs(compiled.playbook, e.args);
        if (refused) {
          host.send(h.id, childResult(e.seq, null, 'failed', null, { message: refused.message, code: CODE.invalid_inputs }, e));
          break;
        }
        // A plain access_token in its args (a parent's handle is passed on as it is) is sealed
        // before the fold is redone, as a lacking id is read: the child's rows hold its handle.
        // Its id is not taken meanwhile but asked for, so that the redone fold has one.
        const args = withheldArgs(host, e.args, h.snapshot?.context.input.workload.access_token);
        if (args === undefined) {
          host.needs.ids++;
          break;
        }
        const workload = { ...compiled.playbook.workload, ...args };
        let admission: ReturnType<typeof admissionOf>;
        try {
          // Its parent's own: it neither opens a debounce window nor joins one (src/flow/undebounced.ts).
          admission = undebounced(admissionOf(compiled.playbook, compiled.path, workload, args));
        } catch (err) {
          host.send(h.id, childResult(e.seq, null, 'failed', null, err instanceof FlowKeyError ? { message: err.message, code: err.code } : errorOf(err), e));
          break;
        }
        // Admitted at its start where its concurrency key has room, as a start through the API is:
        // the key's room is asked for with its id (the fold is redone once for both).
        const key = admission && admitKeyOf(admission);
        const lacksRoom = key ? !host.reads.room.has(roomKey(key.limit, key.key)) : false;
        if (key && lacksRoom) host.needs.rooms.set(roomKey(key.limit, key.key), key);
        const childId = host.takeId();
        if (childId === undefined || lacksRoom) {
          // An id read for it stays asked for (each redone fold reads as many as were lacked).
          if (childId === undefined) host.needs.ids++;
          break;
        }
        // A child runs at its parent's priority, as the parent's commands do (an urgent run's
        // sub-playbooks are urgent too), over its own playbook's; a parent at the default it did
        // not ask for (no priority in its input) leaves the child at its own playbook's.
        const priority = h.snapshot?.context.input.priority;
        host.start({
          ...(admission ? { admission } : {}), ...(priority !== undefined ? { priority } : {}), compiled, executionId: childId, workload, args, parent: { executionId: h.id, rootExecutionId: h.row.root_execution_id, seq: e.seq, depth } });
        host.push(h, { event_type: EVENT.childStarted, step: e.step, context: { seq: e.seq, child_execution_id: childId, path: e.path, task: e.task, ...(e.attempt ? { attempt: e.attempt } : {}), ...(e.loopIndex !== undefined ? { loop_index: e.loopIndex } : {}) } });
        break;
      }
      case 'cancelChildren': {
        const stored = host.reads.children.get(h.id);
        if (!stored) {
          host.needs.children.add(h.id);
          break;
        }
        for (const childId of new Set([...host.heldChildren(h.id), ...stored])) {
          // Who asked for the parent's cancel asked for this one too (each child's log says so; its own children's in turn).
          host.send(childId, { event_type: EVENT.executionCancelled, context: { reason: `parent execution ${h.id} ended`, cancelled_at: new Date().toISOString(), ...(e.requestedBy ? { requested_by: e.requestedBy } : {}) } });
        }
        break;
      }
      case 'cancelChild': {
        // Which child the seq started is in the parent's log (child.started), read when first needed.
        const key = startedKey(h.id, e.seq);
        const child = host.reads.started?.get(key);
        if (child === undefined) {
          host.needs.started.add(key);
          break;
        }
        if (child !== null) host.send(child, { event_type: EVENT.executionCancelled, context: { reason: e.reason, cancelled_at: new Date().toISOString() } });
        break;
      }
      case 'wait': {
        // A timer `for` and a signal's timeout count from now by the database's clock, which fires
        // them (a server's own may be off it); the same value in the row and the event.
        const wakeAt = e.wakeAt ?? (e.afterMs === null ? null : new Date(host.now() + e.afterMs).toISOString());
        // A task timer's purpose goes with its row too: the execution's view reads it there, not from the log.
        rows.waits.push({ execution_id: h.id, seq: e.seq, step: e.step, kind: e.kind, signal: e.signal, wake_at: wakeAt, approval_roles: e.roles, purpose: e.purpose ?? null });
        host.push(h, e.kind === 'timer'
          ? { event_type: EVENT.timerSet, step: e.step, context: { seq: e.seq, wake_at: wakeAt, ...(e.purpose ? { task: e.purpose.task, for: e.purpose.for, attempt: e.purpose.attempt } : {}) } }
          : { event_type: EVENT.signalAwaited, step: e.step, context: { seq: e.seq, signal: e.signal, timeout_at: wakeAt, approval_roles: e.roles } });
        break;
      }
      case 'endWaits':
        for (const seq of e.seqs) endWait(rows, h.id, seq);
        break;
      case 'finish': {
        rows.finished.push({ executionId: h.id, status: e.finished.status });
        // A queued execution's row goes, and the slot an admitted one held is given back.
        const a = h.snapshot!.context.input.admission;
        if (a) rows.admissionEnds.push({ execution_id: h.id, limit: a.limit, key: a.key, held: !h.snapshot!.context.queued });
        // The keychain-entry machine's owner-finished transition decides which entries go.
        rows.keychainCleanup.push({ execution_id: h.id, scopes: scopesRemovedWhenFinished(h.row.parent_execution_id === null) });
        const input = h.snapshot!.context.input;
        if (input.parentExecutionId !== null && input.parentSeq !== null) {
          host.send(input.parentExecutionId, childResult(input.parentSeq, h.id, e.finished.status, e.finished.result, e.finished.error));
        }
        break;
      }
    }
  }
}

/**
 * A child's args with its `access_token` replaced by a handle of its own (the parent's handle, its
 * `workload.access_token`, is passed on as it is); undefined (the need noted) when not sealed yet.
 */
function withheldArgs(host: EffectHost, args: Record<string, unknown>, parentToken: unknown): Record<string, unknown> | undefined {
  const given = args.access_token;
  // Only the parent's own handle is passed on: any other handle text (data from anywhere) is a token like any.
  const token = tokenToSeal(given, given === parentToken);
  if (token === undefined) return args;
  const handle = host.reads.sealed?.get(token);
  if (handle === undefined) host.needs.secrets.add(token);
  return handle === undefined ? undefined : { ...args, access_token: handle };
}

/** A wait is over: its row goes; one begun in this same unit is never written (the statement's parts do not see each other's rows). */
function endWait(rows: UnitRows, executionId: number, seq: number): void {
  const i = rows.waits.findIndex((w) => w.execution_id === executionId && w.seq === seq);
  if (i >= 0) rows.waits.splice(i, 1);
  else rows.waitEnds.push({ execution_id: executionId, seq });
}

/**
 * child.finished for the parent's `seq`; `childId` null when no child was started (not found,
 * refused inputs, too deep): then it names the step and task it failed (`notStarted`; a step's
 * runs find a child's end by its child.started, which such a task has none of).
 */
function childResult(seq: number, childId: number | null, status: string, result: unknown, error: unknown, notStarted?: { step: string; task: string }): EventInput {
  const context = { seq, child_execution_id: childId, status, ...(notStarted ? { task: notStarted.task } : {}) };
  return { event_type: EVENT.childFinished, step: notStarted?.step ?? null, context, result, error };
}
