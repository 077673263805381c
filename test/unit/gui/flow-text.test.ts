// The console's words for flow control (gui/src/flow-text.ts): a rate, a key, and where an
// execution's admission is (debounce window open, queued, admitted).
import { describe, expect, it } from 'vitest';
import { flowState, isInlineLimit, keyText, rateText, tokensText } from '../../../gui/src/flow-text.ts';

const at = (s: number) => new Date(Date.UTC(2026, 0, 1, 12, 0, s)).toISOString();
const flow = (over: Partial<Parameters<typeof flowState>[0]> = {}): Parameters<typeof flowState>[0] => ({ limit: 'tenant', key: 'acme', priority: 5, not_before: null, queued_at: at(1), admitted_at: null, ...over });

describe('flow control in words', () => {
  it('writes a rate, tokens, a key and an inline limit', () => {
    expect(rateText({ limit: 10, period_seconds: 1, burst: 5 })).toBe('10 / 1 s, burst 5');
    expect(rateText(null)).toBe('—');
    expect(tokensText(null)).toBe('—');
    expect(tokensText(3.456)).toBe('3.5');
    expect(tokensText(0)).toBe('0');
    expect(keyText('')).toBe('(empty key)');
    expect(keyText('acme')).toBe('acme');
    expect(isInlineLimit('@flows/export')).toBe(true);
    expect(isInlineLimit('tenant')).toBe(false);
  });

  it('tells a queued admission from an open debounce window and an admitted one', () => {
    // Queued without a window (not_before null): queued, whatever the clock says.
    expect(flowState(flow(), Date.parse(at(0)))).toBe('queued');
    expect(flowState(flow(), Date.parse(at(9)))).toBe('queued');
    // A window closing at :05: debounced before, queued after.
    expect(flowState(flow({ not_before: at(5) }), Date.parse(at(3)))).toBe('debounced');
    expect(flowState(flow({ not_before: at(5) }), Date.parse(at(6)))).toBe('queued');
    expect(flowState(flow({ limit: null, key: null, not_before: at(5) }), Date.parse(at(3)))).toBe('debounced');
    expect(flowState(flow({ admitted_at: at(4) }), Date.parse(at(9)))).toBe('admitted');
  });
});
