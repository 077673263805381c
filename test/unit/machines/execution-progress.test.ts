import { describe, expect, it } from 'vitest';
import { executionProgress } from '../../../machines/execution-progress.ts';

const steps = (n: number) => Array.from({ length: n }, (_, i) => `s${i}`);

describe('executionProgress', () => {
  it('is done steps over known steps whatever the outcome; 100 for a completed execution', () => {
    expect(executionProgress('completed', steps(1), 5)).toBe(100);
    expect(executionProgress('failed', steps(1), 5)).toBe(20);
    expect(executionProgress('cancelled', [], 5)).toBe(0);
    expect(executionProgress('cancelled', steps(2), 5)).toBe(40);
    expect(executionProgress('running', steps(3), 4)).toBe(75);
  });

  it('does not count the step whose error failed the execution; a handled error counts', () => {
    // Failing at step 2 of 5: step 1 done.
    expect(executionProgress('failed', ['s0', 's1'], 5, 's1')).toBe(20);
    // A one-step playbook failing at its step did nothing.
    expect(executionProgress('failed', ['start'], 1, 'start')).toBe(0);
    // The failing step had not ended (e.g. a loop stopped): every ended step counts.
    expect(executionProgress('failed', ['s0'], 5, 's1')).toBe(20);
    // Only a failed execution discounts it.
    expect(executionProgress('running', ['s0', 's1'], 5, 's1')).toBe(40);
  });

  it('never says 100 while a step is left, nor while running', () => {
    expect(executionProgress('failed', steps(199), 200)).toBe(99);
    expect(executionProgress('running', steps(4), 4)).toBe(99);
    expect(executionProgress('cancelled', steps(5), 5)).toBe(100);
  });

  it('stays within 0..100 for odd counts (no steps, more ended than known)', () => {
    expect(executionProgress('running', [], 0)).toBe(0);
    expect(executionProgress('failed', steps(7), 5)).toBe(100);
  });
});
