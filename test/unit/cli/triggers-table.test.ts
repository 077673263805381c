import { describe, expect, it } from 'vitest';
import { triggersTable, type TriggerItem } from '../../../src/cli/triggers-table.ts';

const base: TriggerItem = { path: 'orders/ingest', name: 'orders', kind: 'nats', state: 'active', next_fires: [], last_fire: null, fires: 0, skipped: 0, errors: 0, last_error: null, subscription_problem: null };

describe('svc triggers list', () => {
  it('says under the table why a NATS trigger is not consuming, and nothing while it consumes', () => {
    const now = Date.parse('2026-11-28T03:00:00Z');
    const failing = { ...base, subscription_problem: { message: 'stream not found', since: '2026-11-28T02:59:30.000Z' } };
    expect(triggersTable([failing], now)).toContain('\norders/ingest orders: not consuming since 2026-11-28T02:59:30Z (30.0s ago): stream not found\n');
    expect(triggersTable([base], now)).not.toContain('not consuming');
  });
});
