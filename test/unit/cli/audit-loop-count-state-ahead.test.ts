// `svc run --wait` reads an execution's events, then its state (GET /state) for the running loops'
// items. When the loop ended between the two reads, the state showed no loop while the events still
// said it ran, and the live line dropped to `now: many` without its count for a tick (CI, a slow
// machine). The last count is kept until the events say the step ended.
import { expect, it } from 'vitest';
import { StepProgress } from '../../../src/cli/step-progress.ts';

const at = '2026-12-02T00:00:00Z';
const loop = (done: number) => ({ status: 'active' as const, loop: { length: 6, done, in_flight: 1, mode: 'sequential' as const, max_in_flight: 1 } });

it('keeps a running loop\'s last count when the state read after the events shows it ended', () => {
  const p = new StepProgress(1);
  p.apply({ event_id: 1, event_type: 'step.enter', step: 'many', created_at: at });
  p.setLoops({ many: loop(5) });
  expect(p.runningText('many')).toBe('many (5/6 items)');
  p.setLoops({ many: { status: 'completed' } });
  expect(p.runningText('many')).toBe('many (5/6 items)');
  // Ended by the events: entered again (a goto), it starts without the old count.
  p.apply({ event_id: 2, event_type: 'step.exit', step: 'many', created_at: at, context: { status: 'ok' } });
  p.apply({ event_id: 3, event_type: 'step.enter', step: 'many', created_at: at });
  expect(p.runningText('many')).toBe('many');
  p.setLoops({ many: loop(1) });
  expect(p.runningText('many')).toBe('many (1/6 items)');
});
