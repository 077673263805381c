import { describe, expect, it } from 'vitest';
import { HotSnapshots } from '../../../actors/hot-snapshots.ts';
import { recordClaims } from '../../../actors/publish.ts';
import type { CommandRow } from '../../../src/db/command.repo.ts';
import { FlowClock } from '../../../src/flow/flow-clock.ts';
import { createMetrics } from '../../../src/metrics.ts';

function limited(commandId: number, attempt: number, createdMs: number, claimedMs: number, tookRoom: boolean): CommandRow {
  return {
    command_id: commandId,
    execution_id: commandId,
    catalog_id: 1,
    seq: 1,
    step: 'export',
    loop_index: null,
    status: 'CLAIMED',
    attempt,
    worker_id: 'w',
    input: {},
    claimed_at: new Date(claimedMs),
    heartbeat_at: new Date(claimedMs),
    created_at: new Date(createdMs),
    limit_name: 'exports',
    limit_key: 'x',
    took_room: tookRoom,
  };
}

async function value(metrics: ReturnType<typeof createMetrics>, name: string): Promise<number> {
  const found = (await metrics.registry.getMetricsAsJSON()).find((m) => m.name === name);
  const v = found?.values.find((x) => x.labels.limit === 'exports' && x.labels.kind === 'command' && ('metricName' in x ? x.metricName === `${name}_sum` || x.metricName === name : true));
  return v?.value ?? 0;
}

describe('flow metrics of claims', () => {
  it("a stranded command taken over from a dead worker is not admitted again: it never gave its key's slot back", async () => {
    const metrics = createMetrics();
    const deps = { snapshots: new HotSnapshots(), metrics };
    // Issued at 0, claimed after 2 s of waiting for room; its worker was SIGKILLed and another took it over at 60 s.
    recordClaims(deps, [limited(1, 1, 0, 2_000, true)]);
    recordClaims(deps, [limited(1, 2, 0, 60_000, false)]);
    expect(await value(metrics, 'svc_flow_admissions_total')).toBe(1);
    expect(await value(metrics, 'svc_flow_wait_seconds')).toBe(2);
  });

  it('a claim withdrawn to a pause and claimed from PENDING after the resume is admitted again, its wait observed once', async () => {
    const metrics = createMetrics();
    const drawn: string[][] = [];
    const flowClock = new FlowClock();
    flowClock.listen({ queued: () => {}, freed: () => {}, freedOn: () => {}, limited: (l) => drawn.push([...l]) });
    const deps = { snapshots: new HotSnapshots(), metrics, flowClock };
    recordClaims(deps, [limited(1, 1, 0, 2_000, true)]);
    recordClaims(deps, [limited(1, 2, 0, 90_000, true)]);
    expect(await value(metrics, 'svc_flow_admissions_total')).toBe(2);
    expect(await value(metrics, 'svc_flow_wait_seconds')).toBe(2);
    // The admitter hears of both: each drew on its key's bucket.
    expect(drawn).toEqual([['exports'], ['exports']]);
  });
});
