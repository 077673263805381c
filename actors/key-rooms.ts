import { startRooms, type AdmitKey } from '../src/db/flow.repo.ts';
import type { Queryable } from '../src/db/queryable.ts';
import type { Admission } from '../machines/execution/types.ts';

/** How long a key's room read from the database is trusted: other servers admit and free on it meanwhile. */
export const KEY_ROOM_TTL_MS = 1_000;
/** Keys held before the expired ones are let go (keys are many: one per tenant, say). */
const MAX_KEYS_HELD = 10_000;

type Room = { room: number; queued: boolean; readAt: number };

/** A concurrency key's entry (a limit name and a key; text in PostgreSQL holds no NUL). */
export const roomKey = (limit: string, key: string): string => `${limit}\u0000${key}`;

/** The key an admission may be admitted on at its start: one of a concurrency limit, not debounced; null for any other. */
export function admitKeyOf(a: Admission): AdmitKey | null {
  return a.limit === null || a.key === null || a.debounce !== null ? null : { limit: a.limit, key: a.key, capacity: a.capacity };
}

/**
 * This server's memory of how many starts each concurrency key can admit at once (flow control's
 * admission at the start): read for keys it does not hold or has held over KEY_ROOM_TTL_MS, then
 * counted down by the admissions its units commit and up by the ends of admitted executions they
 * route. A cache inside the read before the fold, like the start prelude's heads: where another
 * server took the room meanwhile, the write's guard (migrations/0028) fails and the unit reads
 * its keys afresh (`forget`); where another freed some, a start queues and the admitter admits it.
 */
export class KeyRooms {
  readonly #rooms = new Map<string, Room>();

  /** The room of each of `keys` (by roomKey), reading those not held or held too long in one statement. */
  async take(q: Queryable, keys: readonly AdmitKey[]): Promise<Map<string, number>> {
    const now = Date.now();
    const out = new Map<string, number>();
    const read: AdmitKey[] = [];
    for (const k of keys) {
      const id = roomKey(k.limit, k.key);
      const r = this.#rooms.get(id);
      if (r && now - r.readAt < KEY_ROOM_TTL_MS) out.set(id, r.room);
      else read.push(k);
    }
    if (!read.length) return out;
    if (this.#rooms.size > MAX_KEYS_HELD) for (const [id, r] of this.#rooms) if (now - r.readAt >= KEY_ROOM_TTL_MS) this.#rooms.delete(id);
    for (const r of await startRooms(q, read)) {
      const id = roomKey(r.limit, r.key);
      this.#rooms.set(id, { room: r.room, queued: r.queued, readAt: now });
      out.set(id, r.room);
    }
    return out;
  }

  /** After a commit: a start was admitted on the key (one slot fewer). */
  took(limit: string, key: string): void {
    const r = this.#rooms.get(roomKey(limit, key));
    if (r) r.room = Math.max(0, r.room - 1);
  }

  /** After a commit: a start was queued on the key (no room until the queue is read empty again). */
  queued(limit: string, key: string): void {
    const r = this.#rooms.get(roomKey(limit, key));
    if (r) {
      r.room = 0;
      r.queued = true;
    }
  }

  /** After a commit: an admitted execution of the key ended (its slot is free; the queue's first, if any, takes it). */
  gave(limit: string, key: string): void {
    const r = this.#rooms.get(roomKey(limit, key));
    if (r && !r.queued) r.room++;
  }

  /** A write's guard failed: the keys' rooms are read again. */
  forget(keys: readonly AdmitKey[]): void {
    for (const k of keys) this.#rooms.delete(roomKey(k.limit, k.key));
  }
}
