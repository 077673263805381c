// The hot snapshots are published after each unit's commit, and units commit in any order: a
// unit that held an execution without writing to it (its event was moot) publishes the state it
// read, which a unit that wrote meanwhile may have moved on. The older one must not win: a paused
// state put back over its resume left the server refusing the pause ("is paused") while the
// execution ran, and its due timer moot for ever.
import { describe, expect, it } from 'vitest';
import { HotSnapshots } from '../../../actors/hot-snapshots.ts';
import type { Snapshot } from '../../../actors/unit-types.ts';

const input = { catalogId: 1, path: 'p', parentExecutionId: null, rootExecutionId: 7 };
const state = (paused: boolean): Snapshot => ({ value: { running: {} }, context: { paused, input } }) as unknown as Snapshot;

describe('HotSnapshots.set', () => {
  it('keeps the newest state when an older one is published after it', () => {
    const hot = new HotSnapshots();
    const resumed = state(false);
    hot.set(7, 5, resumed);
    hot.set(7, 4, state(true));
    expect(hot.get(7, 5)).toBe(resumed);
    expect(hot.get(7, 4)).toBeUndefined();
    expect(hot.row(7)).toMatchObject({ status: 'running', last_event_id: 5 });
  });

  it('takes a newer state', () => {
    const hot = new HotSnapshots();
    hot.set(7, 4, state(true));
    const resumed = state(false);
    hot.set(7, 5, resumed);
    expect(hot.get(7, 5)).toBe(resumed);
    expect(hot.row(7)).toMatchObject({ status: 'running', last_event_id: 5 });
  });
});
