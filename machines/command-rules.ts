import type { AnyStateMachine } from 'xstate';
import { COMMAND_STATUSES, commandMachine, type CommandStatus } from './command.machine.ts';

/** One of the machine's transitions for an event from a status: its guard's name, if any, and where it goes. */
export type CommandArc = { guard: string | undefined; target: CommandStatus };

/** A transition the SQL carries out itself: the statuses it moves a command from, and the one it moves it to. */
export type CommandMove = { readonly from: readonly CommandStatus[]; readonly to: CommandStatus };

/**
 * The command machine read as data, once: what the SQL's guards are generated from
 * (src/db/command-plans.ts) and what report verdicts are decided by (report-verdict.ts).
 */
export type CommandRules = {
  /** A new command's status (the machine's initial state). */
  readonly initial: CommandStatus;
  /** Statuses no event leaves (final states): the command is over. */
  readonly final: readonly CommandStatus[];
  /** A claim by a worker (long poll, by id, claim-ahead): from what nobody holds. */
  readonly claim: CommandMove;
  /** A claim taken from a holder the claim policy lets go (reaper, stale worker, hard timeout). */
  readonly reclaim: CommandMove;
  /** A cancel of the command (its execution, loop or branch ended). */
  readonly cancel: CommandMove;
  /** Its execution paused while nobody claimed it: withdrawn from the claims (migrations/0047). */
  readonly pause: CommandMove;
  /** Its execution resumed: claimable again (migrations/0047). */
  readonly resume: CommandMove;
  /** Its execution paused and the claim policy let its holder go: withdrawn as a pause withdraws (the reaper). */
  readonly withdraw: CommandMove;
  /** The arcs of `eventType` from `status`, in the machine's order (empty: the event moves nothing). */
  arcs(status: CommandStatus, eventType: string): readonly CommandArc[];
};

// Moves the SQL writes as it is told: no guard (the SQL cannot run one; the claim policy is the
// reclaim's precondition, checked in SQL before the event is "sent"), one target for every status.
// A claim also takes the command for its claimer (the SQL bumps `attempt` and sets the holder).
const SQL_MOVES = { claim: ['takeClaim'], reclaim: ['takeClaim'], cancel: [], pause: [], resume: [], withdraw: [] } as const;

function statusOf(key: string): CommandStatus {
  const status = COMMAND_STATUSES.find((s) => s === key);
  if (!status) throw new Error(`command machine: state ${key} is not a command status`);
  return status;
}

/**
 * Reads `machine` (the command machine, or a variant of it in tests) into CommandRules; throws
 * when it has something the SQL could not carry out (a guarded or branching claim, reclaim or
 * cancel, or one without the claim's action), so a machine the SQL disagrees with never loads.
 */
export function commandRulesOf(machine: AnyStateMachine): CommandRules {
  const nodes = Object.entries(machine.root.states);
  const statuses = nodes.map(([key]) => statusOf(key));
  const missing = COMMAND_STATUSES.filter((s) => !statuses.includes(s));
  if (missing.length) throw new Error(`command machine: no state for ${missing.join(', ')}`);
  const arcs = new Map<string, CommandArc[]>();
  for (const [key, node] of nodes) {
    for (const [eventType, transitions] of node.transitions) {
      arcs.set(`${key}|${eventType}`, transitions.map((t) => {
        if (t.guard !== undefined && typeof t.guard !== 'string') throw new Error(`command machine: ${key} on ${eventType} has an unnamed guard`);
        // A transition without a target stays where it is.
        return { guard: t.guard, target: statusOf(t.target?.[0]?.key ?? key) };
      }));
    }
  }
  const move = (eventType: keyof typeof SQL_MOVES): CommandMove => {
    const from: CommandStatus[] = [];
    const targets = new Set<CommandStatus>();
    for (const [key, node] of nodes) {
      const ts = node.transitions.get(eventType) ?? [];
      if (!ts.length) continue;
      const where = `command machine: ${key} on ${eventType}`;
      if (ts.length > 1 || ts[0].guard !== undefined) throw new Error(`${where} is guarded or branches: the SQL carries out one unguarded move`);
      const actions = ts[0].actions.map((a) => (typeof a === 'string' ? a : '?'));
      if (actions.join() !== SQL_MOVES[eventType].join()) throw new Error(`${where} has actions [${actions.join()}]; the SQL does [${SQL_MOVES[eventType].join()}]`);
      from.push(statusOf(key));
      targets.add(statusOf(ts[0].target?.[0]?.key ?? key));
    }
    const [to, ...more] = targets;
    if (!to || more.length) throw new Error(`command machine: ${eventType} must move to one status, not [${[...targets].join()}]`);
    return { from, to };
  };
  const initial = machine.root.initial?.target?.[0]?.key;
  if (initial === undefined) throw new Error('command machine: no initial state');
  return {
    initial: statusOf(initial),
    final: nodes.filter(([, node]) => node.type === 'final').map(([key]) => statusOf(key)),
    claim: move('claim'),
    reclaim: move('reclaim'),
    cancel: move('cancel'),
    pause: move('pause'),
    resume: move('resume'),
    withdraw: move('withdraw'),
    arcs: (status, eventType) => arcs.get(`${status}|${eventType}`) ?? [],
  };
}

/** The command machine's rules (read at module load). */
export const COMMAND_RULES: CommandRules = commandRulesOf(commandMachine);
