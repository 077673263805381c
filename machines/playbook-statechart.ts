import type { NormalizedPlaybook, NormalizedStep } from '../src/dsl/parse-playbook.ts';

// The statechart of a playbook, as plain JSON (no functions): the machine the runtime folds
// events with (machines/execution.machine.ts gives the named actions and guards their code) and
// the definition GET /api/catalog/playbook/{path}/statechart hands to Stately's editor.
//
// Shape: `running` is a parallel state with one region per step (steps of a playbook can run at
// the same time: inclusive forks, loops in flight). Each region moves idle → active → completed |
// failed (and back to active when an arc enters the step again). An arc `A → B when W` is a
// transition into B's `active` carrying `meta.when`; a loop step's `active` holds an `iterating`
// state describing the loop; a step with a `playbook` task shows the child it waits for. The
// execution ends in the final states completed, failed or cancelled.

export type GuardRef = { type: 'stepEntered' | 'stepOk' | 'stepFailed'; params: { step: string; from?: string; arc?: number } } | 'completed' | 'failed';
export type TransitionJson = { target?: string; guard?: GuardRef; actions?: string | string[]; meta?: Record<string, unknown>; description?: string };
export type StateNodeJson = {
  id?: string;
  type?: 'parallel' | 'final';
  initial?: string;
  entry?: string;
  description?: string;
  meta?: Record<string, unknown>;
  always?: TransitionJson[];
  on?: Record<string, TransitionJson | TransitionJson[]>;
  states?: Record<string, StateNodeJson>;
};
export type StatechartJson = StateNodeJson & { id: string; initial: string; states: Record<string, StateNodeJson> };

type Incoming = { from: string; index: number; when?: string; mode: 'exclusive' | 'inclusive' };

/** The events that move an execution; each runs the `fold` action (the transition function of a step). */
export const EXECUTION_EVENT_TYPES = ['command.completed', 'command.failed', 'child.finished', 'execution.abandoned'] as const;

const cache = new WeakMap<NormalizedPlaybook, StatechartJson>();

/** Compiles a parsed playbook into its statechart (pure; the same object for the same playbook). */
export function compileStatechart(pb: NormalizedPlaybook): StatechartJson {
  const hit = cache.get(pb);
  if (hit) return hit;
  const incoming = new Map<string, Incoming[]>(pb.workflow.map((s) => [s.step, []]));
  for (const s of pb.workflow) {
    s.next.arcs.forEach((arc, index) => incoming.get(arc.step)?.push({ from: s.step, index, when: arc.when, mode: s.next.mode }));
  }
  const regions: Record<string, StateNodeJson> = {};
  for (const s of pb.workflow) regions[s.step] = stepRegion(s, s.step === pb.entry, incoming.get(s.step) ?? []);
  const on: Record<string, TransitionJson> = {};
  for (const type of EXECUTION_EVENT_TYPES) on[type] = { actions: 'fold' };
  on['execution.cancelled'] = { target: 'cancelled', actions: 'fold', description: 'cancel: pending commands and child executions are cancelled' };
  const chart: StatechartJson = {
    id: 'execution',
    initial: 'running',
    description: `playbook ${pb.metadata.path ?? pb.metadata.name}`,
    states: {
      running: {
        type: 'parallel',
        entry: 'start',
        always: [
          { guard: 'completed', target: 'completed', description: 'nothing left running' },
          { guard: 'failed', target: 'failed', description: 'a step failed and no arc handled it' },
        ],
        on,
        states: regions,
      },
      completed: { type: 'final' },
      failed: { type: 'final' },
      cancelled: { type: 'final' },
    },
  };
  cache.set(pb, chart);
  return chart;
}

function stepRegion(step: NormalizedStep, isEntry: boolean, arcs: Incoming[]): StateNodeJson {
  const name = step.step;
  const entered: GuardRef = { type: 'stepEntered', params: { step: name } };
  const enter: TransitionJson[] = [];
  if (isEntry) enter.push({ target: 'active', guard: entered, meta: { entry: true }, description: 'entry step' });
  for (const a of arcs) {
    enter.push({
      target: 'active',
      guard: { type: 'stepEntered', params: { step: name, from: a.from, arc: a.index } },
      meta: { from: a.from, arc: a.index, fork: a.mode, ...(a.when !== undefined ? { when: a.when } : {}) },
      description: `${a.from} → ${name} ${a.when !== undefined ? `when ${a.when}` : `when ${a.from} succeeded`}${a.mode === 'inclusive' ? ' (inclusive fork: every arc that holds)' : ''}`,
    });
  }
  const outcome: TransitionJson[] = [
    { target: 'completed', guard: { type: 'stepOk', params: { step: name } } },
    { target: 'failed', guard: { type: 'stepFailed', params: { step: name } } },
  ];
  const reenter: TransitionJson[] = [{ target: 'active', guard: entered, meta: { reentry: true }, description: `${name} entered again by an arc` }];
  return {
    meta: { step: name, next: step.next.mode, tasks: step.tasks.map((t) => ({ name: t.name, kind: t.kind, retry: t.retry })) },
    ...(step.desc ? { description: step.desc } : {}),
    initial: 'idle',
    states: {
      idle: { always: [...enter, ...outcome] },
      active: activeState(step, outcome),
      completed: { always: reenter, meta: { step: name, status: 'completed' } },
      failed: { always: reenter, meta: { step: name, status: 'failed' } },
    },
  };
}

function activeState(step: NormalizedStep, outcome: TransitionJson[]): StateNodeJson {
  const children = step.tasks.filter((t) => t.kind === 'playbook').map((t) => ({ task: t.name, path: (t as { path?: unknown }).path }));
  const retries = step.tasks.filter((t) => t.retry.attempts > 1).map((t) => `${t.name} up to ${t.retry.attempts} attempts`);
  const notes = [
    ...(children.length ? [`waits for child playbook ${children.map((c) => String(c.path)).join(', ')} (child.finished)`] : []),
    ...(retries.length ? [`retries: ${retries.join('; ')}`] : []),
  ];
  const node: StateNodeJson = {
    meta: { step: step.step, ...(children.length ? { children } : {}), ...(retries.length ? { retries } : {}) },
    ...(notes.length ? { description: notes.join('. ') } : {}),
    always: outcome,
  };
  if (!step.loop) return node;
  const loop = { in: step.loop.in, iterator: step.loop.iterator ?? 'item', mode: step.loop.mode ?? 'sequential', ...(step.loop.max_in_flight ? { max_in_flight: step.loop.max_in_flight } : {}) };
  return {
    ...node,
    initial: 'iterating',
    states: {
      iterating: {
        meta: { loop },
        description: `${loop.mode} loop over ${typeof loop.in === 'string' ? loop.in : JSON.stringify(loop.in)} as ${loop.iterator}${loop.mode === 'parallel' ? `, at most ${loop.max_in_flight ?? 'all'} in flight` : ', one at a time'}; stops at the first failed item`,
      },
    },
  };
}
