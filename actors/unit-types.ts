import type { SnapshotFrom } from 'xstate';
import type { ExecutionMachine } from '../machines/execution.machine.ts';
import type { ExecutionInput } from '../machines/execution/types.ts';
import type { Identity } from '../src/auth/identity.ts';
import type { ChildPlaybook, EventRow, ExecutionRow, ExecutionStatus } from '../src/db/execution.repo.ts';
import type { UnitAdmission, UnitCommand, UnitWait, UnitWaitEnd } from '../src/db/unit-write.ts';
import type { EventInput } from '../src/protocol.ts';
import type { CompiledPlaybook } from './playbook-cache.ts';
import type { Needs, Reads } from './prefetch.ts';

// The types the steps of a unit of work share (fold.ts, effect-rows.ts, write.ts), kept apart so
// that none of those files imports another's internals.

export type Snapshot = SnapshotFrom<ExecutionMachine>;

/**
 * An event the fold appended, with the id it takes (`reserved`: an id reserved for it earlier, a
 * batch item's); `issued_seq` links a `command.issued` event to the command inserted with it.
 */
export type UnitEvent = EventRow & { issued_seq?: number | null; reserved?: boolean };

export type StartRequest = {
  compiled: CompiledPlaybook;
  /** Allocated beforehand: batched starts take theirs from the start prelude, children from the reads. */
  executionId: number;
  workload: Record<string, unknown>;
  args: Record<string, unknown>;
  /** `depth`: how many parents the new execution has (ExecutionInput.depth). */
  parent?: { executionId: number; rootExecutionId: number; seq: number; commandId?: number | null; depth?: number };
  /** Who asked for it (an API request), recorded on `execution.started` as `requested_by`. */
  requestedBy?: Identity;
  /** Written beside the input in the `execution.started` context (where the execution came from). */
  origin?: Record<string, unknown>;
  /** A retry's recorded step outcomes (ExecutionInput.replay). */
  replay?: ExecutionInput['replay'];
  /** Signals a successor keeps from its start (ExecutionInput.signals). */
  signals?: ExecutionInput['signals'];
  /** The start's own priority (0..9; absent: the playbook's). */
  priority?: number;
  /** What it waits for before its entry step (src/flow/admission-of.ts), if anything. */
  admission?: ExecutionInput['admission'];
};

export type HeldRow = Pick<ExecutionRow, 'execution_id' | 'catalog_id' | 'path' | 'parent_execution_id' | 'root_execution_id'>;

/** An execution as effect-rows and the write read it (the fold alone changes it). */
export type Subject = {
  readonly id: number;
  readonly isNew: boolean;
  readonly row: HeldRow;
  readonly compiled: CompiledPlaybook;
  readonly snapshot: Snapshot | null;
  readonly status: ExecutionStatus;
  readonly lastEventId: number;
  /** last_event_id as read (0 for a new execution): its write fails if the row has moved on since. */
  readonly readLastEventId: number;
  /** The last event the stored snapshot holds (0: none stored). */
  readonly snapshotEventId: number;
  readonly dirty: boolean;
  readonly parentCommandId: number | null;
};

/** The rows effects become, in the order the write statement inserts them. */
export type UnitRows = {
  readonly events: UnitEvent[];
  readonly commands: UnitCommand[];
  readonly cancels: { execution_id: number; seq: number }[];
  readonly keychainCleanup: { execution_id: number; scopes: string[] }[];
  /** Events for executions outside the unit: appended to their logs by the write's one statement. */
  readonly inbox: { executionId: number; event: EventInput }[];
  readonly finished: { executionId: number; status: ExecutionStatus }[];
  /** Waits begun (core.wait rows) and ended (their rows removed). */
  readonly waits: UnitWait[];
  readonly waitEnds: UnitWaitEnd[];
  /**
   * Executions queued for admission (or admitted at their start), and those that ended (their rows
   * go): with the concurrency key whose slot an admitted one (`held`) gives back.
   */
  readonly admissions: UnitAdmission[];
  readonly admissionEnds: { execution_id: number; limit: string | null; key: string | null; held: boolean }[];
};

/** What the fold lends effect-rows while it turns one transition's effects into rows. */
export interface EffectHost {
  readonly rows: UnitRows;
  readonly reads: Reads;
  /** Filled when an effect lacks a read: the fold is then redone with it. */
  readonly needs: Needs;
  push(h: Subject, e: EventInput): UnitEvent;
  /** Delivers an event to another execution: queued in the fold when held, else an inbox row. */
  send(executionId: number, event: EventInput): void;
  /** The next child id among the reads; undefined when none is left. */
  takeId(): number | undefined;
  compile(entry: ChildPlaybook): CompiledPlaybook;
  /** Starts a child in the fold: its initial transition and its effects' rows, now. */
  start(req: StartRequest): void;
  /** Running children of `parentId` held in this fold (started in it, or loaded). */
  heldChildren(parentId: number): number[];
  /** Now (epoch ms) as a wait's `for` or timeout counts from it: the database's clock, which fires it, as last read. */
  now(): number;
}
