// `svc logs` on flow control's events. execution.admitted of a debounced execution carries the
// last start's payload as its result, and the timeline showed that payload alone (`{"n":4}`)
// where docs/cli.md says other events show their context: what it was admitted on (limit, key)
// and with which priority were not on the line. Both admission events now read as sentences.
import { describe, expect, it } from 'vitest';
import { Timeline } from '../../../src/cli/logs-view.ts';
import type { ExecutionEvent } from '../../../src/cli/run-api.ts';

const at = '2026-11-30T18:42:45.790Z';
const event = (id: number, type: string, context: Record<string, unknown>, result?: unknown): ExecutionEvent => ({ event_id: id, event_type: type, step: null, context, ...(result === undefined ? {} : { result }), created_at: at });
const detailOf = (e: ExecutionEvent) => new Timeline().line(e).split(/\s{2,}/).at(-1)?.trim();

describe('svc logs, admission lines', () => {
  it('a debounced admission names its limit, key and priority, then the payload it runs with', () => {
    expect(detailOf(event(3, 'execution.admitted', { at, key: 'acme', limit: 'tenant', priority: 7 }, { n: 4 }))).toBe('on limit tenant key "acme", priority 7, with the last start\'s payload {"n":4}');
    expect(detailOf(event(3, 'execution.admitted', { at, key: null, limit: null, priority: 5 }, { n: 4 }))).toBe('priority 5, with the last start\'s payload {"n":4}');
  });

  it('an admission and a queueing without a payload say the same of their limit', () => {
    expect(detailOf(event(3, 'execution.admitted', { at, key: 'acme', limit: 'tenant', priority: 5 }))).toBe('on limit tenant key "acme", priority 5');
    expect(detailOf(event(2, 'execution.queued', { key: 'acme', limit: 'tenant', priority: 5 }))).toBe('on limit tenant key "acme", priority 5');
    expect(detailOf(event(2, 'execution.queued', { key: null, limit: null, priority: 3, debounce_until: '2026-11-30T18:42:43.681Z' }))).toBe('priority 3, until its debounce window closes at 2026-11-30T18:42:43.681Z');
  });
});
