// Which steps may still take a kept signal (machines/execution/keepers-ahead.ts), the one rule of
// the machine's `bufferable` guard and of the signal route's answer: a signal was kept for any
// step that says `buffer: true`, also one the execution had passed, which never took it.
import { describe, expect, it } from 'vitest';
import { keepersAhead } from '../../../machines/execution/keepers-ahead.ts';
import { Driver, shell } from './helpers.ts';

const names = (d: Driver, role?: 'operator' | 'admin' | null) => keepersAhead(d.playbook, d.context, 'go', role).map((s) => s.step);
const go = (role: 'operator' | 'admin') => ({ type: 'signal.received' as const, seq: null, signal: { name: 'go', payload: 1, by: 'op', role } });

describe('keepersAhead', () => {
  const line = [
    { step: 'first', tool: [shell('a')], next: 'early' },
    { step: 'early', wait: { signal: 'go', buffer: true }, next: 'middle' },
    { step: 'middle', tool: [shell('m')], next: 'late' },
    { step: 'late', wait: { signal: 'go', buffer: true, approval: { roles: ['admin'] } } },
  ];

  it('names the steps ahead, nearest first; a passed one is not ahead, and a signal then is not kept', () => {
    const d = Driver.of(line);
    expect(names(d)).toEqual(['early', 'late']);
    expect(names(d, 'operator')).toEqual(['early']);
    d.completeOk(1);
    d.send({ type: 'signal.received', seq: 2, signal: { name: 'go', payload: 1, by: 'op', role: 'operator' } });
    // At `middle`: `early` is behind; `late` takes admins' signals only.
    expect(names(d)).toEqual(['late']);
    expect(names(d, 'operator')).toEqual([]);
    expect(d.send(go('operator'))).toEqual([]);
    expect(d.context.signals).toEqual({});
    d.send(go('admin'));
    expect(d.context.signals.go).toHaveLength(1);
  });

  it('counts a step behind as ahead when an arc leads back to it, whatever its when', () => {
    const d = Driver.of([
      { step: 'gate', wait: { signal: 'go', buffer: true }, next: 'work' },
      { step: 'work', tool: [shell('w')], next: [{ step: 'gate', when: '{{ false }}' }] },
    ]);
    d.send({ type: 'signal.received', seq: 1, signal: { name: 'go', payload: 1, by: 'op', role: 'operator' } });
    // At `work`, `gate` is behind, and ahead again through the arc back.
    expect(names(d)).toEqual(['gate']);
    d.send(go('operator'));
    expect(d.context.signals.go).toHaveLength(1);
  });

  it('names the entry step and those after it while nothing ran yet (queued)', () => {
    const d = Driver.of(line, { admission: { limit: 'l', key: '', capacity: 1, debounce: null } });
    expect(d.context.queued).toBe(true);
    expect(names(d)).toEqual(['early', 'late']);
  });
});
