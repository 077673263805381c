// This server's memory of concurrency keys' room (actors/key-rooms.ts): what it reads, what it
// counts, when it reads again. The statement itself runs against PostgreSQL in
// test/integration/engine/flow-api.test.ts.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { KEY_ROOM_STALE_MS, KEY_ROOM_TTL_MS, KeyRooms, roomKey } from '../../../actors/key-rooms.ts';
import type { Queryable } from '../../../src/db/queryable.ts';

/** A Queryable answering svc_start_rooms from `rooms` (limit/key → room, changed by the test as it goes), recording the keys each call asked for. */
function roomsDb(rooms: Record<string, number>): { q: Queryable; asked: string[][] } {
  const asked: string[][] = [];
  const query = async (config: { values: [string[], string[], (number | null)[]] }) => {
    const [limits, keys] = config.values;
    asked.push(keys);
    return { rows: keys.map((key, i) => ({ limit: limits[i], key, room: rooms[key] ?? 0, queued: (rooms[key] ?? 0) === 0 })), rowCount: keys.length };
  };
  return { q: { query } as unknown as Queryable, asked };
}

/** A Queryable whose every query fails (a database away). */
const downDb = { query: async () => Promise.reject(new Error('connection refused')) } as unknown as Queryable;

/** Lets a background read's promise settle. */
const settled = () => new Promise((resolve) => setImmediate(resolve));

const k = (key: string) => ({ limit: 'tenant', key, capacity: null });

afterEach(() => {
  vi.useRealTimers();
});

describe('KeyRooms', () => {
  it('reads the keys it does not hold, in one statement, and answers the rest from memory', async () => {
    const { q, asked } = roomsDb({ a: 2, b: 1 });
    const rooms = new KeyRooms(q);
    expect(await rooms.take(q, [k('a'), k('b')])).toEqual(new Map([[roomKey('tenant', 'a'), 2], [roomKey('tenant', 'b'), 1]]));
    expect(await rooms.take(q, [k('a'), k('c')])).toEqual(new Map([[roomKey('tenant', 'a'), 2], [roomKey('tenant', 'c'), 0]]));
    expect(asked).toEqual([['a', 'b'], ['c']]);
  });

  it('counts down at admissions, up at ends; a key with a queue gains nothing from an end', async () => {
    const { q } = roomsDb({ a: 1, b: 0 });
    const rooms = new KeyRooms(q);
    await rooms.take(q, [k('a'), k('b')]);
    rooms.took('tenant', 'a');
    expect((await rooms.take(q, [k('a')])).get(roomKey('tenant', 'a'))).toBe(0);
    rooms.gave('tenant', 'a');
    expect((await rooms.take(q, [k('a')])).get(roomKey('tenant', 'a'))).toBe(1);
    // b was read with work queued on it: the queue's first takes a freed slot, not a new start.
    rooms.gave('tenant', 'b');
    expect((await rooms.take(q, [k('b')])).get(roomKey('tenant', 'b'))).toBe(0);
    // A start queued here: the key has no room for others until it is read again.
    rooms.queued('tenant', 'a');
    rooms.gave('tenant', 'a');
    expect((await rooms.take(q, [k('a')])).get(roomKey('tenant', 'a'))).toBe(0);
  });

  it('reads a key without room again before the start once it is KEY_ROOM_TTL_MS old, or once forgotten (a write whose guard failed)', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const { q, asked } = roomsDb({ a: 0 });
    const rooms = new KeyRooms(downDb);
    await rooms.take(q, [k('a')]);
    vi.setSystemTime(Date.now() + KEY_ROOM_TTL_MS - 1);
    await rooms.take(q, [k('a')]);
    expect(asked).toHaveLength(1);
    vi.setSystemTime(Date.now() + 1);
    await rooms.take(q, [k('a')]);
    expect(asked).toHaveLength(2);
    rooms.forget([k('a')]);
    await rooms.take(q, [k('a')]);
    expect(asked).toHaveLength(3);
  });

  it('answers a key with room from memory past KEY_ROOM_TTL_MS while reading it again in the background, once, and takes what it read', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const start = roomsDb({ a: 3 });
    // Another server took two meanwhile: what the background read finds.
    const background = roomsDb({ a: 1 });
    const rooms = new KeyRooms(background.q);
    await rooms.take(start.q, [k('a')]);
    rooms.took('tenant', 'a');
    vi.setSystemTime(Date.now() + KEY_ROOM_TTL_MS);
    expect((await rooms.take(start.q, [k('a')])).get(roomKey('tenant', 'a'))).toBe(2);
    expect((await rooms.take(start.q, [k('a')])).get(roomKey('tenant', 'a'))).toBe(2);
    expect(background.asked).toEqual([['a']]);
    await settled();
    expect((await rooms.take(start.q, [k('a')])).get(roomKey('tenant', 'a'))).toBe(1);
    expect(start.asked).toEqual([['a']]);
    expect(background.asked).toEqual([['a']]);
  });

  it('reads a key with room before the start once it is KEY_ROOM_STALE_MS old; a failed background read keeps it until then', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const { q, asked } = roomsDb({ a: 2 });
    const rooms = new KeyRooms(downDb);
    await rooms.take(q, [k('a')]);
    vi.setSystemTime(Date.now() + KEY_ROOM_TTL_MS);
    expect((await rooms.take(q, [k('a')])).get(roomKey('tenant', 'a'))).toBe(2);
    await settled();
    vi.setSystemTime(Date.now() + KEY_ROOM_STALE_MS - KEY_ROOM_TTL_MS - 1);
    expect((await rooms.take(q, [k('a')])).get(roomKey('tenant', 'a'))).toBe(2);
    expect(asked).toHaveLength(1);
    vi.setSystemTime(Date.now() + 1);
    await rooms.take(q, [k('a')]);
    expect(asked).toHaveLength(2);
  });
});
