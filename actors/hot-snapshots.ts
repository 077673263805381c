import type { SnapshotFrom } from 'xstate';
import type { ExecutionMachine } from '../machines/execution.machine.ts';

type Snapshot = SnapshotFrom<ExecutionMachine>;

/** How many running executions keep their machine snapshot in this process's memory. */
export const HOT_SNAPSHOT_MAX_ENTRIES = 2_000;

/**
 * The machine snapshots of executions this process routed last, as committed: when the
 * execution's `last_event_id` is still the one we wrote, nobody else touched it since, and the
 * snapshot need not be read, parsed or refolded. Snapshots are immutable, so sharing is safe.
 */
export class HotSnapshots {
  readonly #entries = new Map<number, { lastEventId: number; snapshot: Snapshot }>();
  readonly #max: number;

  constructor(max = HOT_SNAPSHOT_MAX_ENTRIES) {
    this.#max = max;
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

  /** Records committed state; call only after the transaction that wrote it committed. */
  set(id: number, lastEventId: number, snapshot: Snapshot): void {
    this.#entries.delete(id);
    if (this.#entries.size >= this.#max) this.#entries.delete(this.#entries.keys().next().value!);
    this.#entries.set(id, { lastEventId, snapshot });
  }

  delete(id: number): void {
    this.#entries.delete(id);
  }

  get size(): number {
    return this.#entries.size;
  }
}
