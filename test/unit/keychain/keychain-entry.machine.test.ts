import { readFileSync } from 'node:fs';
import { describe, expect, it, vi } from 'vitest';
import { initialTransition, transition } from 'xstate';
import { getShortestPaths, getSimplePaths } from 'xstate/graph';
import {
  keychainEntryMachine,
  readOutcome,
  type KeychainEntryEvent,
  type KeychainEntryInput,
  type KeychainEntrySnapshot,
  type ReadOutcome,
} from '../../../machines/keychain-entry.machine.ts';
import type { KeychainScope } from '../../../src/keychain/cache-key.ts';

type Action = ReturnType<typeof transition<typeof keychainEntryMachine>>[1][number];

function start(input: KeychainEntryInput): KeychainEntrySnapshot {
  return initialTransition(keychainEntryMachine, input)[0];
}

function step(snapshot: KeychainEntrySnapshot, event: KeychainEntryEvent): [KeychainEntrySnapshot, Action[]] {
  return transition(keychainEntryMachine, snapshot, event);
}

const stateOf = (snapshot: KeychainEntrySnapshot): string => String(snapshot.value);
const types = (actions: Action[]): string[] => actions.map((action) => action.type);

describe('keychainEntryMachine: direct transitions', () => {
  it('starts absent without a stored expiry and live when hydrated from a row', () => {
    const [absent, actions] = initialTransition(keychainEntryMachine, { name: 'api', scope: 'global' });
    expect(stateOf(absent)).toBe('absent');
    expect(actions).toEqual([]);
    expect(absent.context).toEqual({ name: 'api', scope: 'global', autoRenew: false, expiresAtMs: null, accessCount: 0 });

    const live = start({ name: 'api', scope: 'global', autoRenew: true, expiresAtMs: 1000, accessCount: 4 });
    expect(stateOf(live)).toBe('live');
    expect(live.context).toEqual({ name: 'api', scope: 'global', autoRenew: true, expiresAtMs: 1000, accessCount: 4 });
  });

  it('absent READ answers not_found and asks to log it', () => {
    const [next, actions] = step(start({ name: 'api', scope: 'global' }), { type: 'READ', now: 5 });
    expect(stateOf(next)).toBe('absent');
    expect(readOutcome(next)).toBe('not_found');
    expect(actions).toMatchObject([{ type: 'logNotFound', params: { name: 'api', message: "KEYCHAIN: Entry 'api' not found" } }]);
  });

  it('STORED makes a live entry with the new expiry and a fresh access count', () => {
    const [next, actions] = step(start({ name: 'api', scope: 'global', expiresAtMs: 10, accessCount: 9 }), {
      type: 'STORED',
      expiresAt: 2000,
    });
    expect(stateOf(next)).toBe('live');
    expect(next.context).toMatchObject({ expiresAtMs: 2000, accessCount: 0 });
    expect(actions).toEqual([]);
  });

  it('live READ before expiry records the access', () => {
    const live = start({ name: 'api', scope: 'global', expiresAtMs: 1000, accessCount: 2 });
    const [next, actions] = step(live, { type: 'READ', now: 999 });
    expect(stateOf(next)).toBe('live');
    expect(readOutcome(next)).toBe('success');
    expect(next.context.accessCount).toBe(3);
    expect(actions).toMatchObject([{ type: 'recordAccess', params: { name: 'api', accessCount: 3, accessedAtMs: 999 } }]);
  });

  it('live READ at or after expiry moves to expired without counting an access', () => {
    for (const autoRenew of [false, true]) {
      const live = start({ name: 'api', scope: 'global', autoRenew, expiresAtMs: 1000 });
      const [next, actions] = step(live, { type: 'READ', now: 1000 });
      expect(stateOf(next)).toBe('expired');
      expect(readOutcome(next)).toBe('expired');
      expect(next.context.accessCount).toBe(0);
      expect(actions).toMatchObject([
        { type: 'logExpired', params: { name: 'api', autoRenew, message: "KEYCHAIN: Entry 'api' expired" } },
      ]);
    }
  });

  it('RENEW is ignored without auto_renew', () => {
    const [expired] = step(start({ name: 'api', scope: 'global', expiresAtMs: 1 }), { type: 'READ', now: 2 });
    const [next, actions] = step(expired, { type: 'RENEW' });
    expect(stateOf(next)).toBe('expired');
    expect(actions).toEqual([]);
  });

  it('auto-renew: RENEW requests renewal, RENEWED stores the fresh entry and goes live', () => {
    const [expired] = step(start({ name: 'api', scope: 'global', autoRenew: true, expiresAtMs: 1 }), { type: 'READ', now: 2 });
    const [renewing, renewActions] = step(expired, { type: 'RENEW' });
    expect(stateOf(renewing)).toBe('renewing');
    expect(readOutcome(renewing)).toBe('expired');
    expect(renewActions).toMatchObject([{ type: 'requestRenewal', params: { name: 'api' } }]);

    const [live, renewedActions] = step(renewing, { type: 'RENEWED', expiresAt: 3_600_002 });
    expect(stateOf(live)).toBe('live');
    expect(live.context.expiresAtMs).toBe(3_600_002);
    expect(renewedActions).toMatchObject([{ type: 'storeRenewedEntry', params: { name: 'api', expiresAtMs: 3_600_002 } }]);
    expect(readOutcome(step(live, { type: 'READ', now: 3 })[0])).toBe('success');
  });

  it('renews only what a read found expired: RENEW on a live entry is ignored', () => {
    const live = start({ name: 'api', scope: 'global', autoRenew: true, expiresAtMs: 1000 });
    const [next, actions] = step(live, { type: 'RENEW' });
    expect(stateOf(next)).toBe('live');
    expect(actions).toEqual([]);
  });

  it('a READ while renewing answers expired and does nothing', () => {
    const [expired] = step(start({ name: 'api', scope: 'global', autoRenew: true, expiresAtMs: 1 }), { type: 'READ', now: 2 });
    const [renewing] = step(expired, { type: 'RENEW' });
    const [next, actions] = step(renewing, { type: 'READ', now: 3 });
    expect(stateOf(next)).toBe('renewing');
    expect(readOutcome(next)).toBe('expired');
    expect(actions).toEqual([]);
  });

  it('RENEW_FAILED logs the exact failure line and is not retried automatically', () => {
    const [expired] = step(start({ name: 'api', scope: 'global', autoRenew: true, expiresAtMs: 1 }), { type: 'READ', now: 2 });
    const [renewing] = step(expired, { type: 'RENEW' });
    const [failed, actions] = step(renewing, { type: 'RENEW_FAILED', reason: 'token endpoint answered HTTP 401, expected 200' });
    expect(stateOf(failed)).toBe('renewalFailed');
    expect(readOutcome(failed)).toBe('expired');
    expect(actions).toEqual([
      expect.objectContaining({
        type: 'logRenewalFailed',
        params: {
          name: 'api',
          reason: 'token endpoint answered HTTP 401, expected 200',
          message: "KEYCHAIN: Failed to renew 'api'",
        },
      }),
    ]);
    const [still, retryActions] = step(failed, { type: 'RENEW' });
    expect(stateOf(still)).toBe('renewalFailed');
    expect(retryActions).toEqual([]);

    // A later read starts over: expired again, and renewal may be asked for once more.
    const [expiredAgain, readActions] = step(failed, { type: 'READ', now: 3 });
    expect(stateOf(expiredAgain)).toBe('expired');
    expect(types(readActions)).toEqual(['logExpired']);
    expect(types(step(expiredAgain, { type: 'RENEW' })[1])).toEqual(['requestRenewal']);
  });

  it('OWNER_FINISHED deletes local and shared entries, not global ones', () => {
    for (const scope of ['local', 'shared'] as const) {
      const [next, actions] = step(start({ name: 'api', scope, expiresAtMs: 1000 }), { type: 'OWNER_FINISHED' });
      expect(stateOf(next)).toBe('absent');
      expect(next.context.expiresAtMs).toBeNull();
      expect(actions).toMatchObject([{ type: 'deleteEntry', params: { name: 'api', scope } }]);
    }
    const [global, actions] = step(start({ name: 'api', scope: 'global', expiresAtMs: 1000 }), { type: 'OWNER_FINISHED' });
    expect(stateOf(global)).toBe('live');
    expect(actions).toEqual([]);
  });

  it('OWNER_FINISHED and DELETED on an absent entry change nothing', () => {
    const absent = start({ name: 'api', scope: 'local' });
    for (const event of [{ type: 'OWNER_FINISHED' }, { type: 'DELETED' }] as const) {
      const [next, actions] = step(absent, event);
      expect(stateOf(next)).toBe('absent');
      expect(actions).toEqual([]);
    }
  });

  it('DELETED removes the entry from every state; STORED overrides every state', () => {
    const hydrated = start({ name: 'api', scope: 'global', autoRenew: true, expiresAtMs: 1 });
    const [expired] = step(hydrated, { type: 'READ', now: 2 });
    const [renewing] = step(expired, { type: 'RENEW' });
    const [failed] = step(renewing, { type: 'RENEW_FAILED', reason: 'x' });
    for (const snapshot of [hydrated, expired, renewing, failed]) {
      const [gone, deleteActions] = step(snapshot, { type: 'DELETED' });
      expect(stateOf(gone)).toBe('absent');
      expect(deleteActions).toEqual([]);
      const [stored, storeActions] = step(snapshot, { type: 'STORED', expiresAt: 50 });
      expect(stateOf(stored)).toBe('live');
      expect(stored.context.expiresAtMs).toBe(50);
      expect(storeActions).toEqual([]);
    }
  });

  it('returns effects without executing them and leaves the input snapshot untouched', () => {
    const spy = vi.fn();
    const machine = keychainEntryMachine.provide({ actions: { recordAccess: spy } });
    const [live] = initialTransition(machine, { name: 'api', scope: 'global', expiresAtMs: 1000 });
    const before = structuredClone(live.context);
    const [next, actions] = transition(machine, live, { type: 'READ', now: 1 });
    expect(spy).not.toHaveBeenCalled();
    expect(types(actions)).toEqual(['recordAccess']);
    expect(live.context).toEqual(before);
    expect(transition(machine, live, { type: 'READ', now: 1 })[0].context).toEqual(next.context);
  });

  it('resumes from a persisted snapshot', () => {
    const [expired] = step(start({ name: 'api', scope: 'global', autoRenew: true, expiresAtMs: 1 }), { type: 'READ', now: 2 });
    const persisted = JSON.parse(JSON.stringify(keychainEntryMachine.getPersistedSnapshot(expired)));
    const restored = keychainEntryMachine.resolveState(persisted);
    expect(stateOf(restored)).toBe('expired');
    expect(types(step(restored, { type: 'RENEW' })[1])).toEqual(['requestRenewal']);
  });

  it('imports nothing with I/O', () => {
    const source = readFileSync(new URL('../../../machines/keychain-entry.machine.ts', import.meta.url), 'utf8');
    const imports = [...source.matchAll(/^import\s+(type\s+)?.*?from\s+'([^']+)';/gms)].map((m) => ({
      typeOnly: m[1] !== undefined,
      from: m[2],
    }));
    for (const imp of imports) {
      expect(imp.typeOnly || imp.from === 'xstate', `runtime import of ${imp.from}`).toBe(true);
    }
  });
});

// ---------------------------------------------------------------------------------------------
// Model-based: walk the machine's graph and replay every path against a reference model of the
// spec's "Keychain entry (as read)" table, comparing read outcomes, context and effects.

const EXPIRES_AT_MS = 1000;
const RENEWED_EXPIRES_AT_MS = 5000;
const WALK_EVENTS: KeychainEntryEvent[] = [
  { type: 'STORED', expiresAt: EXPIRES_AT_MS },
  { type: 'READ', now: 500 },
  { type: 'READ', now: EXPIRES_AT_MS }, // the boundary: now == expiresAt is expired
  { type: 'READ', now: 2000 },
  { type: 'READ', now: 6000 },
  { type: 'RENEW' },
  { type: 'RENEWED', expiresAt: RENEWED_EXPIRES_AT_MS },
  { type: 'RENEW_FAILED', reason: 'token endpoint answered HTTP 500, expected 200' },
  { type: 'DELETED' },
  { type: 'OWNER_FINISHED' },
];

/** The row and the renewal in flight, written straight from the spec, not from the machine. */
interface Reference {
  row: { expiresAtMs: number; accessCount: number; seenExpired: boolean } | null;
  renewal: 'idle' | 'inFlight' | 'failed';
}

function referenceStep(
  model: Reference,
  event: KeychainEntryEvent,
  scope: KeychainScope,
  autoRenew: boolean,
): { model: Reference; effects: string[] } {
  const { row, renewal } = model;
  switch (event.type) {
    case 'STORED':
      return { model: { row: { expiresAtMs: event.expiresAt, accessCount: 0, seenExpired: false }, renewal: 'idle' }, effects: [] };
    case 'DELETED':
      return { model: { row: null, renewal: 'idle' }, effects: [] };
    case 'OWNER_FINISHED':
      if (row !== null && scope !== 'global') return { model: { row: null, renewal: 'idle' }, effects: ['deleteEntry'] };
      return { model, effects: [] };
    case 'READ':
      if (row === null) return { model, effects: ['logNotFound'] };
      if (renewal === 'inFlight') return { model, effects: [] };
      // Time only moves forward: once a stored value was seen expired it stays expired.
      if (row.seenExpired || event.now >= row.expiresAtMs) {
        return { model: { row: { ...row, seenExpired: true }, renewal: 'idle' }, effects: ['logExpired'] };
      }
      return { model: { row: { ...row, accessCount: row.accessCount + 1 }, renewal }, effects: ['recordAccess'] };
    case 'RENEW':
      // Renewal follows a read that found the entry expired (spec table), and only with auto-renew.
      if (row !== null && row.seenExpired && autoRenew && renewal === 'idle') return { model: { row, renewal: 'inFlight' }, effects: ['requestRenewal'] };
      return { model, effects: [] };
    case 'RENEWED':
      if (renewal !== 'inFlight') return { model, effects: [] };
      return {
        model: { row: { expiresAtMs: event.expiresAt, accessCount: 0, seenExpired: false }, renewal: 'idle' },
        effects: ['storeRenewedEntry'],
      };
    case 'RENEW_FAILED':
      if (renewal !== 'inFlight') return { model, effects: [] };
      return { model: { row, renewal: 'failed' }, effects: ['logRenewalFailed'] };
  }
}

function referenceOutcome(model: Reference): ReadOutcome {
  if (model.row === null) return 'not_found';
  if (model.renewal !== 'idle' || model.row.seenExpired) return 'expired';
  return 'success';
}

// accessCount grows without bound; leave it out so the walk is finite.
const serializeState = (snapshot: KeychainEntrySnapshot): string =>
  `${JSON.stringify(snapshot.value)}|${snapshot.context.expiresAtMs}`;

const VARIANTS: Array<{ scope: KeychainScope; autoRenew: boolean; hydrated: boolean }> = [];
for (const scope of ['global', 'local', 'shared'] as const) {
  for (const autoRenew of [false, true]) {
    for (const hydrated of [false, true]) VARIANTS.push({ scope, autoRenew, hydrated });
  }
}

describe('keychainEntryMachine: model-based paths (xstate/graph)', () => {
  for (const { scope, autoRenew, hydrated } of VARIANTS) {
    const input: KeychainEntryInput = {
      name: 'api',
      scope,
      autoRenew,
      expiresAtMs: hydrated ? EXPIRES_AT_MS : null,
    };
    const label = `scope=${scope} autoRenew=${autoRenew} hydrated=${hydrated}`;

    it(`reaches exactly the states the spec allows (${label})`, () => {
      const paths = getShortestPaths(keychainEntryMachine, { input, events: WALK_EVENTS, serializeState });
      const reached = new Set(paths.map((path) => stateOf(path.state)));
      const expected = autoRenew
        ? ['absent', 'live', 'expired', 'renewing', 'renewalFailed']
        : ['absent', 'live', 'expired'];
      expect([...reached].sort()).toEqual([...expected].sort());
    });

    it(`agrees with the reference model on every simple path, plus every event after it (${label})`, () => {
      const paths = getSimplePaths(keychainEntryMachine, { input, events: WALK_EVENTS, serializeState });
      expect(paths.length).toBeGreaterThan(0);
      let checkedSteps = 0;

      const check = (snapshot: KeychainEntrySnapshot, model: Reference, event: KeychainEntryEvent, where: string) => {
        const [next, actions] = step(snapshot, event);
        const expected = referenceStep(model, event, scope, autoRenew);
        expect(types(actions), where).toEqual(expected.effects);
        expect(readOutcome(next), where).toBe(referenceOutcome(expected.model));
        expect(next.context.expiresAtMs, where).toBe(expected.model.row?.expiresAtMs ?? null);
        expect(next.context.accessCount, where).toBe(expected.model.row?.accessCount ?? 0);
        for (const action of actions) {
          if (action.type === 'logRenewalFailed') {
            expect(action.params).toMatchObject({ name: 'api', message: "KEYCHAIN: Failed to renew 'api'" });
          }
        }
        checkedSteps++;
        return { snapshot: next, model: expected.model };
      };

      for (const path of paths) {
        let snapshot = start(input);
        let model: Reference = {
          row: hydrated ? { expiresAtMs: EXPIRES_AT_MS, accessCount: 0, seenExpired: false } : null,
          renewal: 'idle',
        };
        expect(readOutcome(snapshot)).toBe(referenceOutcome(model));
        const trail = path.steps.map((s) => s.event.type).join(' > ');
        // steps[0] is the initial state reached by xstate.init; replay the rest.
        for (const { event } of path.steps.filter((s) => !s.event.type.startsWith('xstate.'))) {
          ({ snapshot, model } = check(snapshot, model, event, `${label} along ${trail} at ${event.type}`));
        }
        expect(serializeState(snapshot)).toBe(serializeState(path.state));
        // Every event from the path's end, so self-loops and ignored events are checked too.
        for (const event of WALK_EVENTS) {
          check(snapshot, model, event, `${label} after ${trail} then ${JSON.stringify(event)}`);
        }
      }
      expect(checkedSteps).toBeGreaterThanOrEqual(paths.length * WALK_EVENTS.length);
    });
  }
});
