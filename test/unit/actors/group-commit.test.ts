import { describe, expect, it } from 'vitest';
import { GroupCommit } from '../../../actors/group-commit.ts';

function gate() {
  let open!: () => void;
  const opened = new Promise<void>((r) => (open = r));
  return { open, opened };
}

describe('GroupCommit', () => {
  it('runs a lone item at once and batches what arrives while batches are in flight, up to the weight limit', async () => {
    const batches: number[][] = [];
    const first = gate();
    const g = new GroupCommit<number, string>({
      maxInFlight: 1,
      weight: (n) => n,
      maxWeight: 5,
      run: async (items) => {
        batches.push(items);
        if (batches.length === 1) await first.opened;
        return items.map((n) => `done ${n}`);
      },
    });
    const a = g.submit(1);
    const rest = [g.submit(2), g.submit(3), g.submit(1), g.submit(4)];
    expect(batches).toEqual([[1]]);
    first.open();
    expect(await a).toBe('done 1');
    expect(await Promise.all(rest)).toEqual(['done 2', 'done 3', 'done 1', 'done 4']);
    expect(batches).toEqual([[1], [2, 3], [1, 4]]);
  });

  it('an Error in an item place fails that item; a batch that throws is run again item by item', async () => {
    const batches: string[][] = [];
    const first = gate();
    const g = new GroupCommit<string, string>({
      maxInFlight: 1,
      weight: () => 1,
      maxWeight: 10,
      run: async (items) => {
        batches.push(items);
        if (batches.length === 1) await first.opened;
        if (items.length > 1 && items.includes('poison')) throw new Error('batch failed');
        if (items[0] === 'poison') throw new Error('poison alone');
        return items.map((i) => (i === 'bad' ? new Error('bad item') : i.toUpperCase()));
      },
    });
    const lead = g.submit('lead');
    const ok = g.submit('ok');
    const poison = g.submit('poison');
    const bad = g.submit('bad');
    first.open();
    expect(await lead).toBe('LEAD');
    expect(await ok).toBe('OK');
    await expect(poison).rejects.toThrow('poison alone');
    await expect(bad).rejects.toThrow('bad item');
    expect(batches).toEqual([['lead'], ['ok', 'poison', 'bad'], ['ok'], ['poison'], ['bad']]);
  });

  it('keeps up to maxInFlight batches running', async () => {
    let running = 0;
    let peak = 0;
    const g = new GroupCommit<number, number>({
      maxInFlight: 3,
      weight: () => 1,
      maxWeight: 1,
      run: async (items) => {
        peak = Math.max(peak, ++running);
        await new Promise((r) => setTimeout(r, 10));
        running--;
        return items;
      },
    });
    expect(await Promise.all(Array.from({ length: 9 }, (_, i) => g.submit(i)))).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8]);
    expect(peak).toBe(3);
  });

  it('with a key, never has two batches of one key in flight: its later items wait, in order, while other keys go ahead', async () => {
    const batches: string[][] = [];
    const gates = new Map<string, ReturnType<typeof gate>>();
    const g = new GroupCommit<string, string>({
      maxInFlight: 3,
      weight: () => 1,
      maxWeight: 10,
      key: (item) => item[0],
      run: async (items) => {
        batches.push(items);
        const held = gates.get(items[0]);
        if (held) await held.opened;
        return items;
      },
    });
    gates.set('a1', gate());
    const a1 = g.submit('a1');
    const rest = [g.submit('a2'), g.submit('b1'), g.submit('a3'), g.submit('c1')];
    // b1 and c1 run at once (slots are free) while a2 and a3 wait for a1.
    expect(batches).toEqual([['a1'], ['b1'], ['c1']]);
    gates.get('a1')!.open();
    expect(await a1).toBe('a1');
    expect(await Promise.all(rest)).toEqual(['a2', 'b1', 'a3', 'c1']);
    expect(batches).toEqual([['a1'], ['b1'], ['c1'], ['a2', 'a3']]);
  });

  it('with a key, keeps an item that does not fit ahead of its key\'s later ones', async () => {
    const batches: string[][] = [];
    const first = gate();
    const g = new GroupCommit<string, string>({
      maxInFlight: 1,
      weight: (item) => Number(item.slice(1)),
      maxWeight: 5,
      key: (item) => item[0],
      run: async (items) => {
        batches.push(items);
        if (batches.length === 1) await first.opened;
        return items;
      },
    });
    const all = [g.submit('x1'), g.submit('a3'), g.submit('a4'), g.submit('a1'), g.submit('b2')];
    first.open();
    await Promise.all(all);
    // a4 does not fit after a3; a1 (same key) must not pass it; b2 fits.
    expect(batches).toEqual([['x1'], ['a3', 'b2'], ['a4', 'a1']]);
  });
});
