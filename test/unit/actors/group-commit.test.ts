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
});
