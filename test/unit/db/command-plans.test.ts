import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { COMMAND_RULES } from '../../../machines/command-rules.ts';
import { claimableSql, claimPlan, heldSql, withdrawableSql, WITHDRAWN } from '../../../src/db/command-plans.ts';
import { MIGRATIONS_DIR } from '../../../src/db/migrate.ts';

const migrations = ['0001_core.sql', '0010_recovery.sql', '0021_flow_control.sql'].map((f) => readFileSync(`${MIGRATIONS_DIR}${f}`, 'utf8')).join('\n');
const unqualified = (sql: string) => sql.replace(/\bx\./g, '');

describe('command plans: SQL generated from the command machine', () => {
  it('its status guards are the predicates the partial indexes were written for (a change of the machine needs new indexes)', () => {
    expect(migrations).toContain(`command_pending_idx ON core.command (priority DESC, command_id) WHERE ${unqualified(claimableSql('x'))} AND limit_name IS NULL;`);
    expect(migrations).toContain(`command_limited_idx ON core.command (limit_name, limit_key, priority DESC, command_id) WHERE ${unqualified(claimableSql('x'))} AND limit_name IS NOT NULL;`);
    // The release trigger fires for a held command that stops being held.
    expect(migrations).toContain(`OLD.status IN ('CLAIMED', 'RUNNING') AND NEW.status NOT IN ('CLAIMED', 'RUNNING')`);
    expect(heldSql('x')).toBe(`x.status IN ('CLAIMED', 'RUNNING')`);
    expect(migrations).toContain(`command_active_idx ON core.command (claimed_at) WHERE ${unqualified(heldSql('x'))};`);
    expect(migrations).toMatch(new RegExp(`command_reclaim_idx ON core.command \\(command_id\\)\\s+WHERE ${unqualified(heldSql('x')).replace(/[()]/g, '\\$&')} AND reclaim_attempt = attempt;`));
    // The reaper's withdrawal reads the held commands by command_active_idx, and gives them the pause's status.
    expect(withdrawableSql('x')).toBe(heldSql('x'));
    expect(WITHDRAWN).toBe(`'${COMMAND_RULES.pause.to}'`);
  });

  it("the pause trigger moves unclaimed commands as the machine's pause and resume do", () => {
    // A pause withdraws what the claims pick; a resume gives it back to them (migrations/0047).
    expect(COMMAND_RULES.pause).toEqual({ from: ['PENDING'], to: 'PAUSED' });
    expect(COMMAND_RULES.resume).toEqual({ from: ['PAUSED'], to: 'PENDING' });
    expect(claimableSql('x')).toBe(`x.status = 'PENDING'`);
    // A cancel reaches a withdrawn command too.
    expect(COMMAND_RULES.cancel.from).toContain('PAUSED');
    const trigger = readFileSync(`${MIGRATIONS_DIR}0047_paused_commands.sql`, 'utf8');
    expect(trigger).toContain(`UPDATE core.command SET status = 'PAUSED', updated_at = now() WHERE execution_id = NEW.execution_id AND status = 'PENDING';`);
    expect(trigger).toContain(`UPDATE core.command SET status = CASE WHEN NEW.status = 'running' THEN 'PENDING' ELSE 'CANCELLED' END, updated_at = now()
     WHERE execution_id = NEW.execution_id AND status = 'PAUSED';`);
  });

  it('one claim plan: every claim sets the same columns, whoever claims', () => {
    const policy = { stale: '$9', hard: '$10' };
    const byId = claimPlan('a', { id: '$1', policy }, { worker: '$2', token: 'NULL' }, 'command_id');
    const next = claimPlan('b', { limit: '$2', stranded: policy, limited: true }, { worker: '$1', token: '$3' }, 'command_id');
    const ahead = claimPlan('c', { limit: '$2', stranded: null, limited: false }, { ranges: '$4::jsonb' }, 'c.command_id');
    const setOf = (sql: string) => /SET status = 'CLAIMED', worker_id = \S+, claim_token = \S+, report_id = NULL, attempt = c\.attempt \+ 1, claimed_at = now\(\), heartbeat_at = now\(\), updated_at = now\(\)/.test(sql);
    for (const plan of [byId, next, ahead]) expect(setOf(plan.update), plan.update).toBe(true);
    expect(byId.ctes).toEqual([]);
    // The workers' claim takes commands of no limit, and those of keys with room (counted in the
    // same statement); claim-ahead only those of no limit, with nothing of flow control to start.
    const parts = ['free', 'waiting(limit_name,', 'keys', 'limited', 'pending', 'stranded', 'picked', 'counted'];
    expect(next.ctes.map((c) => c.split(' ')[0])).toEqual(parts.map((p) => `b_${p}`));
    // The keys looked at are those with commands waiting (a skip scan), not every key ever made.
    expect(next.ctes[2]).toMatch(/FROM b_waiting w\s+JOIN core\.flow_key k/);
    expect(ahead.ctes.map((c) => c.split(' ')[0])).toEqual(['pending', 'stranded', 'picked'].map((p) => `c_${p}`));
    expect(ahead.ctes.join('\n')).not.toMatch(/flow_key|limit_name IS NOT NULL/);
    // A claim by id never takes a limit's command (only the picks count a key's room).
    expect(byId.update).toContain('AND c.limit_name IS NULL');
    // Every claim says whether it took room on a key: only the limited pick's rows did (a
    // take-over kept its slot; a claim withdrawn to a pause is claimed at attempt 2 and takes one).
    expect(byId.update).toMatch(/RETURNING command_id, false AS took_room$/);
    expect(next.update).toMatch(/RETURNING command_id, c\.command_id IN \(SELECT command_id FROM b_picked WHERE limit_name IS NOT NULL\) AS took_room$/);
    expect(ahead.update).toMatch(/RETURNING c\.command_id, c_picked\.limit_name IS NOT NULL AS took_room$/);
  });
});
