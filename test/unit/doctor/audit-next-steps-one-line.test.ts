// Each of the doctor's next steps is one line to paste (docs/operations.md shows the deregister
// step so, `printf 'Authorization: Bearer %s\n'`): the step's printf format held a real line
// break, which cut the step in two in the readable output.
import { describe, expect, it } from 'vitest';
import { CHECKS } from '../../../src/doctor/detection-checks.ts';
import { renderOutcome } from '../../../src/doctor/render-outcome.ts';
import { outcome } from '../../../src/doctor/outcome.ts';

const SERVER = 'http://127.0.0.1:8082';
const T = { stuck_minutes: 30, pending_seconds: 300, worker_stale_seconds: 60, limit: 20 };

describe('the next steps of a silent worker pool', () => {
  it('are one line each, the printf format as the docs show it', () => {
    const row = { count: 1, items: [{ name: 'dead-pool', status: 'ready', silent_seconds: 602 }], live_pools: 1 };
    const finding = CHECKS.stale_worker_pools.interpret({ rows: [row] }, T, SERVER, 1);
    expect(finding).toBeDefined();
    for (const step of finding!.next_steps) expect(step).not.toContain('\n');
    expect(finding!.next_steps.join(' ')).toContain(String.raw`printf 'Authorization: Bearer %s\n' "$SVC_WORKER_TOKEN"`);
    const text = renderOutcome(outcome('detect', 'warning', { summary: 's', next_steps: finding!.next_steps }));
    expect(text.split('\n').filter((l) => l.includes('deregister'))).toHaveLength(1);
    expect(text).toContain(`-d '{"name": "dead-pool"}'`);
  });
});
