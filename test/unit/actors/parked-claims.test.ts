import { describe, expect, it } from 'vitest';
import { ParkedClaims } from '../../../actors/parked-claims.ts';
import type { CommandRow } from '../../../src/db/command.repo.ts';
import type { Claimer } from '../../../src/db/unit-write.ts';

const command = (id: number, token: string): CommandRow => ({ command_id: id, claim_token: token }) as CommandRow;

/** A write held in flight: it has taken `claimers`; `commit` ends it with what it claimed, `fail` with an error. */
function heldWrite(parked: ParkedClaims, onCommitted: () => void = () => {}) {
  let claimers: readonly Claimer[] = [];
  const result = Promise.withResolvers<{ claimed: readonly CommandRow[] }>();
  const done = parked.offer(
    async (taken) => {
      claimers = taken;
      return result.promise;
    },
    onCommitted,
  );
  return {
    get claimers() {
      return claimers;
    },
    commit: async (claimed: readonly CommandRow[]) => {
      result.resolve({ claimed });
      await done;
    },
    fail: async () => {
      result.reject(new Error('write failed'));
      await done.catch(() => {});
    },
  };
}

describe('ParkedClaims', () => {
  it('a write takes the waiting claimers, for its own commands only, and hands each those claimed under its token', async () => {
    const parked = new ParkedClaims();
    const a = parked.park({ workerId: 'wa', max: 2, token: 'a' })!;
    const b = parked.park({ workerId: 'wb', max: 1, token: 'b' })!;
    const first = heldWrite(parked);
    expect(first.claimers).toEqual([
      { workerId: 'wa', max: 2, token: 'a', newOnly: true },
      { workerId: 'wb', max: 1, token: 'b', newOnly: true },
    ]);
    // Taken ones are not taken again by another write in flight.
    const concurrent = heldWrite(parked);
    expect(concurrent.claimers).toEqual([]);
    await concurrent.commit([]);
    await first.commit([command(1, 'a'), command(2, 'a')]);
    expect((await a.handed).map((c) => c.command_id)).toEqual([1, 2]);
    expect((await a.leave()).map((c) => c.command_id)).toEqual([1, 2]);
    // Handed nothing: it waits on, and the next write takes it.
    const next = heldWrite(parked);
    expect(next.claimers).toEqual([{ workerId: 'wb', max: 1, token: 'b', newOnly: true }]);
    await next.commit([]);
    expect(await b.leave()).toEqual([]);
    expect(heldWrite(parked).claimers).toEqual([]);
  });

  it('claimers are answered only after the caller published what the write committed', async () => {
    const parked = new ParkedClaims();
    const p = parked.park({ workerId: 'w', max: 1, token: 't' })!;
    const order: string[] = [];
    void p.handed.then(() => order.push('handed'));
    const write = heldWrite(parked, () => order.push('published'));
    await write.commit([command(3, 't')]);
    await p.handed;
    expect(order).toEqual(['published', 'handed']);
  });

  it('leaving while a write holds the claimer waits for that write, and gets what it handed', async () => {
    const parked = new ParkedClaims();
    const p = parked.park({ workerId: 'w', max: 1, token: 't' })!;
    const write = heldWrite(parked);
    let left: CommandRow[] | undefined;
    const leaving = p.leave().then((c) => (left = c));
    await Promise.resolve();
    expect(left).toBeUndefined();
    await write.commit([command(7, 't')]);
    await leaving;
    expect(left?.map((c) => c.command_id)).toEqual([7]);
  });

  it('a second claim under a parked token is not parked: commands handed under one token would reach both', async () => {
    const parked = new ParkedClaims();
    const first = parked.park({ workerId: 'w', max: 1, token: 't' });
    expect(first).not.toBeNull();
    expect(parked.park({ workerId: 'w', max: 1, token: 't' })).toBeNull();
    expect(heldWrite(parked).claimers).toHaveLength(1);
  });

  it('a write that failed hands nothing and leaves the claimers waiting', async () => {
    const parked = new ParkedClaims();
    const p = parked.park({ workerId: 'w', max: 1, token: 't' })!;
    const failed = heldWrite(parked);
    expect(failed.claimers).toHaveLength(1);
    await failed.fail();
    const next = heldWrite(parked);
    expect(next.claimers).toHaveLength(1);
    await next.commit([]);
    expect(await p.leave()).toEqual([]);
  });
});
