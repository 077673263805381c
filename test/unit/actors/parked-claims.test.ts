import { describe, expect, it } from 'vitest';
import { ParkedClaims } from '../../../actors/parked-claims.ts';
import type { CommandRow } from '../../../src/db/command.repo.ts';

const command = (id: number, token: string): CommandRow => ({ command_id: id, claim_token: token }) as CommandRow;

describe('ParkedClaims', () => {
  it('a write takes the waiting claimers, for its own commands only, and hands each those claimed under its token', async () => {
    const parked = new ParkedClaims();
    const a = parked.park({ workerId: 'wa', max: 2, token: 'a' })!;
    const b = parked.park({ workerId: 'wb', max: 1, token: 'b' })!;
    const taken = parked.take();
    expect(taken).toEqual([
      { workerId: 'wa', max: 2, token: 'a', newOnly: true },
      { workerId: 'wb', max: 1, token: 'b', newOnly: true },
    ]);
    // Taken ones are not taken again by another write in flight.
    expect(parked.take()).toEqual([]);
    parked.settle(taken, [command(1, 'a'), command(2, 'a')]);
    expect((await a.handed).map((c) => c.command_id)).toEqual([1, 2]);
    expect((await a.leave()).map((c) => c.command_id)).toEqual([1, 2]);
    // Handed nothing: it waits on, and the next write takes it.
    expect(parked.take()).toEqual([{ workerId: 'wb', max: 1, token: 'b', newOnly: true }]);
    parked.settle([{ workerId: 'wb', max: 1, token: 'b' }], []);
    expect(await b.leave()).toEqual([]);
    expect(parked.take()).toEqual([]);
  });

  it('leaving while a write holds the claimer waits for that write, and gets what it handed', async () => {
    const parked = new ParkedClaims();
    const p = parked.park({ workerId: 'w', max: 1, token: 't' })!;
    const taken = parked.take();
    let left: CommandRow[] | undefined;
    const leaving = p.leave().then((c) => (left = c));
    await Promise.resolve();
    expect(left).toBeUndefined();
    parked.settle(taken, [command(7, 't')]);
    await leaving;
    expect(left?.map((c) => c.command_id)).toEqual([7]);
  });

  it('a second claim under a parked token is not parked: commands handed under one token would reach both', async () => {
    const parked = new ParkedClaims();
    const first = parked.park({ workerId: 'w', max: 1, token: 't' });
    expect(first).not.toBeNull();
    expect(parked.park({ workerId: 'w', max: 1, token: 't' })).toBeNull();
    expect(parked.take()).toHaveLength(1);
  });

  it('a write that failed hands nothing and leaves the claimers waiting', async () => {
    const parked = new ParkedClaims();
    const p = parked.park({ workerId: 'w', max: 1, token: 't' })!;
    parked.settle(parked.take(), []);
    expect(parked.take()).toHaveLength(1);
    parked.settle([{ workerId: 'w', max: 1, token: 't' }], []);
    expect(await p.leave()).toEqual([]);
  });
});
