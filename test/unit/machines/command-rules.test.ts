import { describe, expect, it } from 'vitest';
import { setup } from 'xstate';
import { COMMAND_RULES, commandRulesOf } from '../../../machines/command-rules.ts';
import { commandMachine } from '../../../machines/command.machine.ts';

// Variants of the command machine, for what the rules refuse to read.
const variants = setup({ actions: { takeClaim: () => {} }, guards: { holder: () => true, fresh: () => true } });
type States = NonNullable<Parameters<typeof variants.createMachine>[0]['states']>;
const variantOf = (states: States) => variants.createMachine({ id: 'variant', initial: 'PENDING', states });

const base: States = {
  PENDING: { on: { claim: { target: 'CLAIMED', actions: 'takeClaim' }, pause: 'PAUSED', cancel: 'CANCELLED' } },
  PAUSED: { on: { resume: 'PENDING', cancel: 'CANCELLED' } },
  CLAIMED: { on: { start: { guard: 'holder', target: 'RUNNING' }, reclaim: { target: 'CLAIMED', actions: 'takeClaim' }, withdraw: 'PAUSED', cancel: 'CANCELLED' } },
  RUNNING: { on: { complete: { guard: 'holder', target: 'COMPLETED' }, reclaim: { target: 'CLAIMED', actions: 'takeClaim' }, withdraw: 'PAUSED', cancel: 'CANCELLED' } },
  COMPLETED: { type: 'final' },
  FAILED: { type: 'final' },
  CANCELLED: { type: 'final' },
};

describe('command rules: the command machine read as the SQL carries it out', () => {
  it('reads the claim, reclaim and cancel sets and the final statuses from the machine', () => {
    expect(COMMAND_RULES.initial).toBe('PENDING');
    expect(COMMAND_RULES.final).toEqual(['COMPLETED', 'FAILED', 'CANCELLED']);
    expect(COMMAND_RULES.claim).toEqual({ from: ['PENDING'], to: 'CLAIMED' });
    expect(COMMAND_RULES.reclaim).toEqual({ from: ['CLAIMED', 'RUNNING'], to: 'CLAIMED' });
    expect(COMMAND_RULES.cancel).toEqual({ from: ['PENDING', 'PAUSED', 'CLAIMED', 'RUNNING'], to: 'CANCELLED' });
    expect(COMMAND_RULES.pause).toEqual({ from: ['PENDING'], to: 'PAUSED' });
    expect(COMMAND_RULES.resume).toEqual({ from: ['PAUSED'], to: 'PENDING' });
    expect(COMMAND_RULES.withdraw).toEqual({ from: ['CLAIMED', 'RUNNING'], to: 'PAUSED' });
    expect(COMMAND_RULES.arcs('CLAIMED', 'complete')).toEqual([{ guard: 'holder', target: 'COMPLETED' }]);
    expect(COMMAND_RULES.arcs('RUNNING', 'heartbeat')).toEqual([{ guard: 'holder', target: 'RUNNING' }]);
    expect(COMMAND_RULES.arcs('PENDING', 'complete')).toEqual([]);
  });

  it('follows a change of the machine', () => {
    const rules = commandRulesOf(variantOf({ ...base, RUNNING: { on: { reclaim: { target: 'CLAIMED', actions: 'takeClaim' } } } }));
    expect(rules.cancel.from).toEqual(['PENDING', 'PAUSED', 'CLAIMED']);
    expect(commandRulesOf(commandMachine).reclaim).toEqual(COMMAND_RULES.reclaim);
  });

  it('refuses a machine the SQL could not carry out', () => {
    const guardedClaim: States = { ...base, PENDING: { on: { claim: { guard: 'fresh', target: 'CLAIMED', actions: 'takeClaim' } } } };
    expect(() => commandRulesOf(variantOf(guardedClaim))).toThrow(/PENDING on claim is guarded/);
    const claimWithoutTaking: States = { ...base, PENDING: { on: { claim: 'CLAIMED' } } };
    expect(() => commandRulesOf(variantOf(claimWithoutTaking))).toThrow(/PENDING on claim has actions \[\]/);
    const twoTargets: States = { ...base, RUNNING: { on: { reclaim: { target: 'RUNNING', actions: 'takeClaim' } } } };
    expect(() => commandRulesOf(variantOf(twoTargets))).toThrow(/reclaim must move to one status/);
    const unknownState: States = { ...base, WAITING: {} };
    expect(() => commandRulesOf(variantOf(unknownState))).toThrow(/WAITING is not a command status/);
  });
});
