import type { SnapshotFrom } from 'xstate';
import type { ExecutionMachine } from '../machines/execution.machine.ts';
import type { CommandRow } from '../src/db/command.repo.ts';
import type { ExecutionRow } from '../src/db/execution.repo.ts';
import { TERMINAL_COMMAND_STATUSES } from '../machines/command.machine.ts';
import { executionStatusOf } from '../machines/execution/step-phase.ts';

type Snapshot = SnapshotFrom<ExecutionMachine>;
type Entry = { lastEventId: number; snapshotEventId: number; snapshot: Snapshot };

/**
 * How many running executions keep their machine snapshot in this process's memory (unless
 * SVC_HOT_SNAPSHOTS says otherwise): a few KB each for most playbooks. 2,000 left 8 of 10,000 due
 * timers to be read and restored from their stored snapshots: ~20 % more CPU per fired timer.
 */
export const HOT_SNAPSHOT_MAX_ENTRIES = 10_000;
/** How many claimed commands this process remembers (claimed through it, not yet finished). */
export const HOT_COMMAND_MAX_ENTRIES = 10_000;

/**
 * The machine snapshots of executions this process routed last, as committed: when the
 * execution's `last_event_id` is still the one we wrote, nobody else touched it since, and the
 * snapshot need not be read, parsed or refolded. Snapshots are immutable, so sharing is safe.
 * `commands` holds the rows of commands claimed through this process, as committed.
 */
export class HotSnapshots {
  readonly #entries = new Map<number, Entry>();
  readonly #max: number;
  readonly commands: HotCommands;

  constructor(max = HOT_SNAPSHOT_MAX_ENTRIES, maxCommands = HOT_COMMAND_MAX_ENTRIES) {
    this.#max = max;
    this.commands = new HotCommands(maxCommands);
  }

  /** The last event id of every cached execution among `ids` (to skip loading their stored snapshot). */
  versions(ids: Iterable<number>): Map<number, number> {
    const out = new Map<number, number>();
    for (const id of ids) {
      const e = this.#entries.get(id);
      if (e) out.set(id, e.lastEventId);
    }
    return out;
  }

  /** The snapshot when it is the state after exactly `lastEventId` events. */
  get(id: number, lastEventId: number): Snapshot | undefined {
    const e = this.#entries.get(id);
    if (!e || e.lastEventId !== lastEventId) return undefined;
    // Refresh its place: the map's order is the eviction order.
    this.#entries.delete(id);
    this.#entries.set(id, e);
    return e.snapshot;
  }

  /**
   * The execution's row as this process last committed it (running, every event applied), for
   * routing without reading it; its write must check that it is still so (the write statement guards).
   */
  row(id: number): ExecutionRow | undefined {
    const e = this.#entries.get(id);
    if (!e) return undefined;
    const input = e.snapshot.context.input;
    return {
      execution_id: id,
      catalog_id: input.catalogId,
      path: input.path,
      parent_execution_id: input.parentExecutionId,
      root_execution_id: input.rootExecutionId,
      parent_command_id: null,
      status: executionStatusOf(e.snapshot),
      progress: 0,
      result: null,
      error: null,
      snapshot: null,
      machine_version: 0,
      snapshot_event_id: e.snapshotEventId,
      applied_event_id: e.lastEventId,
      last_event_id: e.lastEventId,
      started_at: new Date(0),
      updated_at: new Date(0),
      finished_at: null,
    };
  }

  /** Records committed state; call only after the transaction that wrote it committed. */
  set(id: number, lastEventId: number, snapshot: Snapshot, snapshotEventId = 0): void {
    // Units publish after their commits, in any order: one that held the execution without
    // writing to it (a moot event) must not put back a state older than one published meanwhile.
    const held = this.#entries.get(id);
    if (held && held.lastEventId > lastEventId) return;
    this.#entries.delete(id);
    if (this.#entries.size >= this.#max) this.#entries.delete(this.#entries.keys().next().value!);
    this.#entries.set(id, { lastEventId, snapshotEventId, snapshot });
  }

  /**
   * Events that fold to nothing (batch records) were appended and counted as applied after
   * `fromEventId`, up to `toEventId`: a snapshot held at `fromEventId` is the state at `toEventId`.
   */
  advance(id: number, fromEventId: number, toEventId: number): void {
    const e = this.#entries.get(id);
    if (e && e.lastEventId === fromEventId) this.#entries.set(id, { ...e, lastEventId: toEventId });
  }

  delete(id: number): void {
    this.#entries.delete(id);
  }

  get size(): number {
    return this.#entries.size;
  }
}

/** Command rows as this process committed them (claims through it, their status since). */
export class HotCommands {
  readonly #rows = new Map<number, CommandRow>();
  readonly #max: number;

  constructor(max: number) {
    this.#max = max;
  }

  get(id: number): CommandRow | undefined {
    return this.#rows.get(id);
  }

  /** Records a committed row; a finished command is forgotten. Rows are copied, never shared. */
  set(row: CommandRow): void {
    this.#rows.delete(row.command_id);
    if (TERMINAL_COMMAND_STATUSES.includes(row.status)) return;
    if (this.#rows.size >= this.#max) this.#rows.delete(this.#rows.keys().next().value!);
    this.#rows.set(row.command_id, { ...row, input: null });
  }
}
