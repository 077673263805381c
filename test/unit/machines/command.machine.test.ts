import { describe, expect, it } from 'vitest';
import { initialTransition, transition, type SnapshotFrom } from 'xstate';
import { getShortestPaths, getSimplePaths } from 'xstate/graph';
import {
  commandMachine,
  TERMINAL_COMMAND_STATUSES,
  type CommandContext,
  type CommandEvent,
  type CommandStatus,
} from '../../../machines/command.machine.ts';

type CommandSnapshot = SnapshotFrom<typeof commandMachine>;

/** Claims (claim + reclaims) explored per path: enough to see a stale claimer at every status. */
const MAX_CLAIMS = 3;

const start = (input: Partial<CommandContext> = {}): CommandSnapshot => initialTransition(commandMachine, input)[0];
const send = (s: CommandSnapshot, e: CommandEvent): CommandSnapshot => transition(commandMachine, s, e)[0];
const statusOf = (s: CommandSnapshot): CommandStatus => s.value as CommandStatus;
const serializeState = (s: CommandSnapshot): string => `${String(s.value)}|${s.context.attempt}|${s.context.workerId ?? '-'}`;
const serializeEvent = (e: CommandEvent): string => JSON.stringify(e);

/**
 * Events worth trying from a state: a claim by two workers and a reclaim (bounded so the graph is
 * finite), a pause, resume, withdraw and cancel, and reports with the current attempt, an older one and a newer one.
 */
function eventsFrom(firstAttempt: number) {
  return (s: CommandSnapshot): CommandEvent[] => eventsAt(s, firstAttempt);
}

function eventsAt(s: CommandSnapshot, firstAttempt: number): CommandEvent[] {
  const a = s.context.attempt;
  const attempts = [...new Set([a, Math.max(0, a - 1), a + 1])];
  const out: CommandEvent[] = [{ type: 'cancel' }, { type: 'pause' }, { type: 'resume' }];
  // Claims bounded too: a withdrawn claim comes back PENDING, to be claimed again (attempt + 1);
  // withdrawn at the first claim only, which is enough to see a claim after it (and keeps the paths few).
  if (a < firstAttempt + MAX_CLAIMS) out.push({ type: 'claim', workerId: 'w1' }, { type: 'claim', workerId: 'w2' }, { type: 'reclaim', workerId: `r${a + 1}` });
  if (a === firstAttempt + 1) out.push({ type: 'withdraw' });
  for (const attempt of attempts) out.push({ type: 'start', attempt }, { type: 'complete', attempt }, { type: 'fail', attempt });
  // Reports that name the worker instead of (or beside) the attempt, a foreign worker, and nobody.
  const holder = s.context.workerId ?? 'w1';
  out.push(
    { type: 'complete', workerId: holder },
    { type: 'heartbeat', workerId: holder },
    { type: 'complete', workerId: 'intruder' },
    { type: 'complete', attempt: a, workerId: 'intruder' },
    { type: 'fail' },
  );
  return out;
}

type Model = { status: CommandStatus; attempt: number; workerId: string | null };

/** The lifecycle as the docs state it, written independently of the machine. */
function reference(m: Model, e: CommandEvent): Model {
  const terminal = TERMINAL_COMMAND_STATUSES.includes(m.status);
  if (terminal) return m;
  if (e.type === 'cancel') return { ...m, status: 'CANCELLED' };
  const reporter = 'attempt' in e || 'workerId' in e ? (e as { attempt?: number | null; workerId?: string | null }) : {};
  const named = reporter.attempt != null || reporter.workerId != null;
  const fresh =
    named && (reporter.attempt == null || reporter.attempt === m.attempt) && (reporter.workerId == null || reporter.workerId === m.workerId);
  switch (m.status) {
    case 'PENDING':
      if (e.type === 'pause') return { ...m, status: 'PAUSED' };
      return e.type === 'claim' ? { status: 'CLAIMED', attempt: m.attempt + 1, workerId: e.workerId } : m;
    case 'PAUSED':
      // Withdrawn by its execution's pause: only the resume (or a cancel) moves it; no claim takes it.
      return e.type === 'resume' ? { ...m, status: 'PENDING' } : m;
    case 'CLAIMED':
    case 'RUNNING':
      if (e.type === 'reclaim') return { status: 'CLAIMED', attempt: m.attempt + 1, workerId: e.workerId };
      // Its holder gone while its execution is paused: given back to the pause, the claim's attempt and holder kept.
      if (e.type === 'withdraw') return { ...m, status: 'PAUSED' };
      if (!fresh) return m;
      if (e.type === 'start') return m.status === 'CLAIMED' ? { ...m, status: 'RUNNING' } : m;
      if (e.type === 'complete') return { ...m, status: 'COMPLETED' };
      if (e.type === 'fail') return { ...m, status: 'FAILED' };
      return m;
    default:
      return m;
  }
}

const modelOf = (s: CommandSnapshot): Model => ({ status: statusOf(s), attempt: s.context.attempt, workerId: s.context.workerId });

const INPUTS: Partial<CommandContext>[] = [{}, { attempt: 2, workerId: 'old' }];

describe('command machine: model-based paths (xstate/graph)', () => {
  for (const input of INPUTS) {
    const label = `input ${JSON.stringify(input)}`;
    const eventsFor = eventsFrom(input.attempt ?? 0);

    it(`reaches every lifecycle state (${label})`, () => {
      const paths = getShortestPaths(commandMachine, { input, events: eventsFor, serializeState, serializeEvent });
      const reached = new Set(paths.map((p) => statusOf(p.state)));
      expect([...reached].sort()).toEqual(['CANCELLED', 'CLAIMED', 'COMPLETED', 'FAILED', 'PAUSED', 'PENDING', 'RUNNING']);
    });

    it(`agrees with the reference model on every simple path, and on every event after it (${label})`, () => {
      const paths = getSimplePaths(commandMachine, { input, events: eventsFor, serializeState, serializeEvent });
      expect(paths.length).toBeGreaterThan(50);
      let checked = 0;
      for (const path of paths) {
        let snap = start(input);
        let model = modelOf(snap);
        expect(model).toEqual({ status: 'PENDING', attempt: input.attempt ?? 0, workerId: input.workerId ?? null });
        const trail = path.steps.map((s) => serializeEvent(s.event)).join(' > ');
        for (const { event } of path.steps) {
          if (event.type.startsWith('xstate.')) continue;
          snap = send(snap, event);
          model = reference(model, event);
          expect(modelOf(snap), `${trail} at ${serializeEvent(event)}`).toEqual(model);
          checked++;
        }
        expect(serializeState(snap)).toBe(serializeState(path.state));
        for (const event of eventsFor(snap)) {
          expect(modelOf(send(snap, event)), `${trail} then ${serializeEvent(event)}`).toEqual(reference(model, event));
          checked++;
        }
      }
      expect(checked).toBeGreaterThan(paths.length);
      // A few seconds alone (a withdrawn claim's second claim doubles the paths); more on a loaded machine.
    }, 60_000);

    it(`a report that does not carry the current attempt, or names another worker, never moves a command (${label})`, () => {
      const paths = getShortestPaths(commandMachine, { input, events: eventsFor, serializeState, serializeEvent });
      let tried = 0;
      for (const p of paths) {
        const a = p.state.context.attempt;
        for (const attempt of [a - 2, a - 1, a + 1, a + 5]) {
          for (const type of ['start', 'complete', 'fail'] as const) {
            const next = send(p.state, { type, attempt });
            expect(serializeState(next), `${serializeState(p.state)} ${type}@${attempt}`).toBe(serializeState(p.state));
            const foreign = send(p.state, { type, attempt: a, workerId: `not-${p.state.context.workerId}` });
            expect(serializeState(foreign), `${serializeState(p.state)} ${type} by another worker`).toBe(serializeState(p.state));
            tried++;
          }
        }
      }
      expect(tried).toBeGreaterThan(0);
    });

    it(`terminal states accept nothing (${label})`, () => {
      const paths = getShortestPaths(commandMachine, { input, events: eventsFor, serializeState, serializeEvent });
      const terminals = paths.filter((p) => TERMINAL_COMMAND_STATUSES.includes(statusOf(p.state)));
      expect(new Set(terminals.map((p) => statusOf(p.state)))).toEqual(new Set(['COMPLETED', 'FAILED', 'CANCELLED']));
      for (const p of terminals) {
        expect(p.state.status).toBe('done');
        const a = p.state.context.attempt;
        const all: CommandEvent[] = [
          ...eventsFor(p.state),
          { type: 'reclaim', workerId: 'late' },
          { type: 'start', attempt: a },
          { type: 'complete', attempt: a },
          { type: 'fail', attempt: a },
        ];
        for (const e of all) {
          const [next, actions] = transition(commandMachine, p.state, e);
          expect(serializeState(next), `${serializeState(p.state)} then ${serializeEvent(e)}`).toBe(serializeState(p.state));
          expect(actions).toEqual([]);
        }
      }
    });
  }
});

describe('command machine: attempt fencing, spelled out', () => {
  it('a stale claimer cannot start, complete or fail a command that was reclaimed', () => {
    let s = send(start(), { type: 'claim', workerId: 'w1' });
    expect(s.context).toEqual({ attempt: 1, workerId: 'w1' });
    s = send(s, { type: 'start', attempt: 1 });
    expect(statusOf(s)).toBe('RUNNING');
    s = send(s, { type: 'reclaim', workerId: 'w2' });
    expect(statusOf(s)).toBe('CLAIMED');
    expect(s.context).toEqual({ attempt: 2, workerId: 'w2' });
    for (const type of ['start', 'complete', 'fail'] as const) expect(statusOf(send(s, { type, attempt: 1 }))).toBe('CLAIMED');
    s = send(s, { type: 'start', attempt: 2 });
    expect(statusOf(s)).toBe('RUNNING');
    expect(statusOf(send(s, { type: 'complete', attempt: 1 }))).toBe('RUNNING');
    expect(statusOf(send(s, { type: 'fail', attempt: 1 }))).toBe('RUNNING');
    expect(statusOf(send(s, { type: 'complete', attempt: 2 }))).toBe('COMPLETED');
  });

  it('a second claim of a claimed command is refused (the holder keeps it)', () => {
    const s = send(start(), { type: 'claim', workerId: 'w1' });
    const again = send(s, { type: 'claim', workerId: 'w2' });
    expect(again.context).toEqual({ attempt: 1, workerId: 'w1' });
  });

  it('a reclaim re-enters CLAIMED from CLAIMED and bumps the attempt each time', () => {
    let s = send(start(), { type: 'claim', workerId: 'w1' });
    s = send(s, { type: 'reclaim', workerId: 'w2' });
    s = send(s, { type: 'reclaim', workerId: 'w3' });
    expect(statusOf(s)).toBe('CLAIMED');
    expect(s.context).toEqual({ attempt: 3, workerId: 'w3' });
  });

  it('a pending command ignores reports and reclaims: only a claim or a cancel moves it', () => {
    const s = start({ attempt: 0 });
    for (const e of [{ type: 'start', attempt: 0 }, { type: 'complete', attempt: 0 }, { type: 'fail', attempt: 0 }, { type: 'reclaim', workerId: 'x' }] as CommandEvent[]) {
      expect(serializeState(send(s, e))).toBe('PENDING|0|-');
    }
    expect(statusOf(send(s, { type: 'cancel' }))).toBe('CANCELLED');
  });

  it('the terminal statuses are exactly the final states of the machine', () => {
    const finals = Object.entries(commandMachine.root.states)
      .filter(([, node]) => node.type === 'final')
      .map(([name]) => name);
    expect(finals.sort()).toEqual([...TERMINAL_COMMAND_STATUSES].sort());
  });
});
