import { describe, expect, it } from 'vitest';
import { Histogram, Registry } from 'prom-client';
import { FIRST_CLAIM_MAX_COMMANDS, FirstClaimLatency } from '../../../src/metrics.ts';
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
    return { f: new FirstClaimLatency(h), count: async () => (await h.get()).values.find((v) => v.metricName === 'h_count')!.value };
  };

  it('observes only the first claim of a batch’s commands, from their issue', async () => {
    const { f, count } = make();
    f.issued('b1', [{ execution_id: 1, seq: 1 }, { execution_id: 1, seq: 2 }], 1_000);
    f.claimed([{ execution_id: 9, seq: 9 }], 1_100); // not a batch's command
    expect(await count()).toBe(0);
    f.claimed([{ execution_id: 1, seq: 2 }], 1_250);
    f.claimed([{ execution_id: 1, seq: 1 }], 1_300); // the batch's second claim
    expect(await count()).toBe(1);
  });

  it('remembers at most FIRST_CLAIM_MAX_COMMANDS commands, forgetting the oldest batches', async () => {
    const { f, count } = make();
    f.issued('old', [{ execution_id: 1, seq: 1 }]);
    for (let i = 0; i < FIRST_CLAIM_MAX_COMMANDS; i++) f.issued(`b${i}`, [{ execution_id: 2, seq: i }]);
    f.claimed([{ execution_id: 1, seq: 1 }]);
    expect(await count()).toBe(0);
    f.claimed([{ execution_id: 2, seq: FIRST_CLAIM_MAX_COMMANDS - 1 }]);
    expect(await count()).toBe(1);
  });
});
