import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { claimableSql, claimPlan, heldSql } from '../../../src/db/command-plans.ts';
import { MIGRATIONS_DIR } from '../../../src/db/migrate.ts';

const migrations = ['0001_core.sql', '0010_recovery.sql'].map((f) => readFileSync(`${MIGRATIONS_DIR}${f}`, 'utf8')).join('\n');
const unqualified = (sql: string) => sql.replace(/\bx\./g, '');

describe('command plans: SQL generated from the command machine', () => {
  it('its status guards are the predicates the partial indexes were written for (a change of the machine needs new indexes)', () => {
    expect(migrations).toContain(`command_pending_idx ON core.command (command_id) WHERE ${unqualified(claimableSql('x'))};`);
    expect(migrations).toContain(`command_active_idx ON core.command (claimed_at) WHERE ${unqualified(heldSql('x'))};`);
    expect(migrations).toMatch(new RegExp(`command_reclaim_idx ON core.command \\(command_id\\)\\s+WHERE ${unqualified(heldSql('x')).replace(/[()]/g, '\\$&')} AND reclaim_attempt = attempt;`));
  });

  it('one claim plan: every claim sets the same columns, whoever claims', () => {
    const policy = { stale: '$9', hard: '$10' };
    const byId = claimPlan('a', { id: '$1', policy }, { worker: '$2', token: 'NULL' }, 'command_id');
    const next = claimPlan('b', { limit: '$2', stranded: policy }, { worker: '$1', token: '$3' }, 'command_id');
    const ahead = claimPlan('c', { limit: '$2', stranded: null }, { ranges: '$4::jsonb' }, 'c.command_id');
    const setOf = (sql: string) => /SET status = 'CLAIMED', worker_id = \S+, claim_token = \S+, attempt = c\.attempt \+ 1, claimed_at = now\(\), heartbeat_at = now\(\), updated_at = now\(\)/.test(sql);
    for (const plan of [byId, next, ahead]) expect(setOf(plan.update), plan.update).toBe(true);
    expect(byId.ctes).toEqual([]);
    expect(next.ctes.map((c) => c.split(' ')[0])).toEqual(['b_pending', 'b_stranded']);
    expect(ahead.ctes.map((c) => c.split(' ')[0])).toEqual(['c_pending']);
    // The long poll without stranded commands picks in a sub-select (a locking CTE is materialised).
    expect(claimPlan('d', { limit: '$2', stranded: null }, { worker: '$1', token: '$3' }, 'command_id').ctes).toEqual([]);
  });
});
