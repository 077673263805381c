import { describe, expect, it } from 'vitest';
import { Histogram, Registry } from 'prom-client';
import { FIRST_CLAIM_MAX_BATCHES, FirstClaimLatency } from '../../../src/metrics.ts';
import { parseServerSentEvent } from '../../../src/worker/server-client.ts';

describe('parseServerSentEvent', () => {
  it('reads event, data (lines joined) and id, skips comments, and has nothing for a block without data', () => {
    expect(parseServerSentEvent('id: 3\nevent: status\ndata: {"a":1}')).toEqual({ event: 'status', data: '{"a":1}', id: '3' });
    expect(parseServerSentEvent('data: one\ndata: two')).toEqual({ event: 'message', data: 'one\ntwo', id: undefined });
    expect(parseServerSentEvent(': keep-alive')).toBeUndefined();
  });
});

describe('FirstClaimLatency', () => {
  const make = () => {
    const registry = new Registry();
    const h = new Histogram({ name: 'h', help: 'h', buckets: [1], registers: [registry] });
    const values = async () => (await h.get()).values;
    return {
      f: new FirstClaimLatency(h),
      count: async () => (await values()).find((v) => v.metricName === 'h_count')!.value,
      sum: async () => (await values()).find((v) => v.metricName === 'h_sum')!.value,
    };
  };
  const at = (ms: number) => new Date(1_000_000 + ms);
  const claim = (batch: string | null, issuedMs: number, claimedMs: number, attempt = 1) => ({ issued_by_batch: batch, attempt, created_at: at(issuedMs), claimed_at: at(claimedMs) });

  it('observes only the first claim of a batch’s commands, from their issue', async () => {
    const { f, count, sum } = make();
    f.claimed([claim(null, 0, 100)]); // not a batch's command
    expect(await count()).toBe(0);
    f.claimed([claim('1', 0, 250)]);
    f.claimed([claim('1', 0, 300)]); // the batch's second claim
    expect(await count()).toBe(1);
    expect(await sum()).toBeCloseTo(0.25);
  });

  it('counts a command’s first claim only, never a claim taken again', async () => {
    const { f, count } = make();
    f.claimed([claim('2', 0, 5_000, 2)]);
    expect(await count()).toBe(0);
  });

  it('remembers at most FIRST_CLAIM_MAX_BATCHES batches, forgetting the oldest', async () => {
    const { f, count } = make();
    f.claimed([claim('old', 0, 1)]);
    for (let i = 0; i < FIRST_CLAIM_MAX_BATCHES; i++) f.claimed([claim(`b${i}`, 0, 1)]);
    expect(await count()).toBe(FIRST_CLAIM_MAX_BATCHES + 1);
    f.claimed([claim('old', 0, 1)]); // forgotten: observed again
    f.claimed([claim(`b${FIRST_CLAIM_MAX_BATCHES - 1}`, 0, 1)]); // remembered
    expect(await count()).toBe(FIRST_CLAIM_MAX_BATCHES + 2);
  });
});
