// A retry's recorded outcomes (ExecutionInput.replay) through the pure machine: a step's runs take
// its list in order, so a cycle of steps that ran a step three times before the retried step runs
// it no more (it ran again from its second run on when only its first run was replayed); an older
// log's single outcome is still its first run's alone.
import { describe, expect, it } from 'vitest';
import type { StepOutcome } from '../../../machines/execution/types.ts';
import { Driver, issued, recordTypes, shell } from './helpers.ts';

// `work` runs three times (vars.n 0, 1, 2), then `final`.
const cycle = [
  { step: 'start', next: [{ step: 'work', set: { n: 0 } }] },
  { step: 'work', tool: [shell('w')], next: [{ step: 'work', when: '{{ vars.n < 2 }}', set: { n: '{{ vars.n + 1 }}' } }, { step: 'final' }] },
  { step: 'final', tool: [shell('f')] },
];
const done = (result: unknown): StepOutcome => ({ status: 'ok', result, error: null, tasks: { w: { status: 'ok', data: result } } });

describe('replayed runs', () => {
  it("a step's runs take its recorded outcomes in order, then run: nothing of the cycle runs again", () => {
    const d = Driver.of(cycle, { replay: { start: [done(null)], work: [done(1), done(2), done(3)] } });
    expect(issued(d.last).map((c) => c.step)).toEqual(['final']);
    expect(recordTypes(d.last).filter((t) => t === 'step.replayed')).toHaveLength(4);
    expect(d.context.vars).toEqual({ n: 2 });
    expect(d.context.steps.work.result).toBe(3);
  });

  it('runs past the list run: two recorded, the third is issued', () => {
    const d = Driver.of(cycle, { replay: { work: [done(1), done(2)] } });
    expect(issued(d.last).map((c) => c.step)).toEqual(['work']);
    expect(d.context.vars).toEqual({ n: 2 });
  });

  it("an older log's single outcome is its first run's alone", () => {
    const d = Driver.of(cycle, { replay: { work: done(1) } });
    expect(issued(d.last).map((c) => c.step)).toEqual(['work']);
    expect(d.context.vars).toEqual({ n: 1 });
  });

  it('a long replayed cycle is not cut as a cycle of steps without tasks', () => {
    const long = [
      { step: 'start', next: [{ step: 'poll', set: { n: 0 } }] },
      { step: 'poll', tool: [shell('p')], next: [{ step: 'poll', when: '{{ vars.n < 1499 }}', set: { n: '{{ vars.n + 1 }}' } }, { step: 'final' }] },
      { step: 'final', tool: [shell('f')] },
    ];
    const d = Driver.of(long, { replay: { poll: Array.from({ length: 1500 }, (_, i) => done(i)) } });
    expect(d.context.finished).toBeNull();
    expect(issued(d.last).map((c) => c.step)).toEqual(['final']);
  });
});
