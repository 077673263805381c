import { startRooms, type AdmitKey } from '../src/db/flow.repo.ts';
import type { Queryable } from '../src/db/queryable.ts';
import type { Admission } from '../machines/execution/types.ts';

/** How long a key's room read from the database is used as it is: other servers admit and free on it meanwhile. */
export const KEY_ROOM_TTL_MS = 1_000;
/**
 * How long, past KEY_ROOM_TTL_MS, a key that had room is still used while it is read again in the
 * background: a start does not wait for that read (the write's guard catches a room another
 * server took meanwhile). A key without room, or with work queued, is read before the start.
 */
export const KEY_ROOM_STALE_MS = 30_000;
/** Keys held before the expired ones are let go (keys are many: one per tenant, say). */
const MAX_KEYS_HELD = 10_000;

type Room = { room: number; queued: boolean; readAt: number; refreshing: boolean };

/** Whether a held key's room may still be used (`now - readAt` under its limit): longer where it had room. */
const usable = (r: Room, now: number): boolean => now - r.readAt < (r.room > 0 && !r.queued ? KEY_ROOM_STALE_MS : KEY_ROOM_TTL_MS);

/** A concurrency key's entry (a limit name and a key; text in PostgreSQL holds no NUL). */
export const roomKey = (limit: string, key: string): string => `${limit}\u0000${key}`;

/** The key an admission may be admitted on at its start: one of a concurrency limit, not debounced; null for any other. */
export function admitKeyOf(a: Admission): AdmitKey | null {
  return a.limit === null || a.key === null || a.debounce !== null ? null : { limit: a.limit, key: a.key, capacity: a.capacity };
}

/**
 * This server's memory of how many starts each concurrency key can admit at once (flow control's
 * admission at the start): read for keys it does not hold, counted down by the admissions its
 * units commit and up by the ends of admitted executions they route, and read again once over
 * KEY_ROOM_TTL_MS old: before the start where the key had no room (another server may have freed
 * some), in the background where it had room (the start goes on with what is held). A cache inside
 * the read before the fold, like the start prelude's heads: where another server took the room
 * meanwhile, the write's guard (migrations/0028) fails and the unit reads its keys afresh
 * (`forget`); where another freed some, a start queues and the admitter admits it.
 */
export class KeyRooms {
  readonly #rooms = new Map<string, Room>();
  /** Where background reads go (the pool: a start's own connection may be inside its transaction). */
  readonly #db: Queryable;

  constructor(db: Queryable) {
    this.#db = db;
  }

  /** The room of each of `keys` (by roomKey): held ones from memory, the others read in one statement on `q`. */
  async take(q: Queryable, keys: readonly AdmitKey[]): Promise<Map<string, number>> {
    const now = Date.now();
    const out = new Map<string, number>();
    const read: AdmitKey[] = [];
    const refresh: AdmitKey[] = [];
    for (const k of keys) {
      const id = roomKey(k.limit, k.key);
      const r = this.#rooms.get(id);
      if (!r || !usable(r, now)) {
        read.push(k);
        continue;
      }
      out.set(id, r.room);
      if (now - r.readAt >= KEY_ROOM_TTL_MS && !r.refreshing) {
        r.refreshing = true;
        refresh.push(k);
      }
    }
    if (refresh.length) void this.#refresh(refresh);
    if (!read.length) return out;
    if (this.#rooms.size > MAX_KEYS_HELD) for (const [id, r] of this.#rooms) if (!r.refreshing && !usable(r, now)) this.#rooms.delete(id);
    for (const r of await startRooms(q, read)) {
      const id = roomKey(r.limit, r.key);
      this.#rooms.set(id, { room: r.room, queued: r.queued, readAt: now, refreshing: false });
      out.set(id, r.room);
    }
    return out;
  }

  /** Reads `keys` again off the start's path. What this server counted meanwhile is replaced by what was read: off by a start or an end at most, which the guard or the admitter sets right. */
  async #refresh(keys: readonly AdmitKey[]): Promise<void> {
    const at = Date.now();
    try {
      for (const r of await startRooms(this.#db, keys)) this.#rooms.set(roomKey(r.limit, r.key), { room: r.room, queued: r.queued, readAt: at, refreshing: false });
    } catch {
      // Nothing learned: the key answers as it was until it is too old, and a start then reads it itself.
      for (const k of keys) {
        const r = this.#rooms.get(roomKey(k.limit, k.key));
        if (r) r.refreshing = false;
      }
    }
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
