// `node bench/transition-cost.ts`: what one transition of the execution machine costs in CPU, for
// sequential chains as long as the bench's (and shorter), folded the way routing folds them
// (actors/pure-transition.ts: the actor that made a snapshot takes the next event), beside the
// same fold through xstate's transition(), which builds a throwaway actor per call. Pure, no
// database. Prints µs per transition for both.
import { initialTransition, transition } from 'xstate';
import { pureInitialTransition, pureTransition } from '../actors/pure-transition.ts';
import { EVENT } from '../machines/event-types.ts';
import { createExecutionMachine, type ExecutionMachine } from '../machines/execution.machine.ts';
import type { Effect, ExecutionInput, TaskOutcome } from '../machines/execution/types.ts';
import { parsePlaybook } from '../src/dsl/parse-playbook.ts';
import { sequentialPlaybook } from './service.ts';
import { median, round } from './stats.ts';
import { STEPS } from './step-overhead.ts';

const CHAIN_LENGTHS = [1, 10, STEPS];
/** Transitions timed per sample (whole folds of a chain); samples interleave the chains. */
const TRANSITIONS_PER_SAMPLE = 4_000;
const SAMPLES = 7;
const WARMUP_SAMPLES = 2;

const INPUT: ExecutionInput = { executionId: 1, catalogId: 1, path: 'bench/chain', parentExecutionId: null, parentSeq: null, rootExecutionId: 1, workload: {}, args: {} };

function chainMachine(steps: number): ExecutionMachine {
  const parsed = parsePlaybook(sequentialPlaybook('bench/chain', steps));
  if (!parsed.ok) throw new Error(`bench chain: ${JSON.stringify(parsed.problems)}`);
  return createExecutionMachine(parsed.playbook);
}

type Transitions = { initial: typeof pureInitialTransition; next: typeof pureTransition };
const PURE: Transitions = { initial: pureInitialTransition, next: pureTransition };
const XSTATE: Transitions = { initial: (m, input) => initialTransition(m, input), next: (m, s, ev) => transition(m, s, ev) };

/** Starts an execution and completes each command it issues until it ends; returns the transitions taken. */
function fold(machine: ExecutionMachine, steps: number, t: Transitions): number {
  let [snapshot, actions] = t.initial(machine, INPUT);
  let transitions = 1;
  for (;;) {
    const command = actions.flatMap((a) => (a.type === 'effect' ? [a.params as Effect] : [])).find((e) => e.type === 'issueCommand');
    if (command?.type !== 'issueCommand') break;
    const tasks: Record<string, TaskOutcome> = Object.fromEntries(command.tasks.map((t) => [t.name, { status: 'ok', data: null }]));
    [snapshot, actions] = t.next(machine, snapshot, { type: EVENT.commandCompleted, seq: command.seq, tasks });
    transitions++;
  }
  if (snapshot.status !== 'done' || transitions !== steps + 1) throw new Error(`a chain of ${steps} ended ${snapshot.status} after ${transitions} transitions`);
  return transitions;
}

function microsPerTransition(machine: ExecutionMachine, steps: number, t: Transitions): number {
  let transitions = 0;
  const t0 = performance.now();
  while (transitions < TRANSITIONS_PER_SAMPLE) transitions += fold(machine, steps, t);
  return ((performance.now() - t0) * 1000) / transitions;
}

const chains = CHAIN_LENGTHS.map((steps) => ({ steps, machine: chainMachine(steps), pure: [] as number[], xstate: [] as number[] }));
for (let i = 0; i < WARMUP_SAMPLES + SAMPLES; i++) {
  for (const c of chains) {
    const p = microsPerTransition(c.machine, c.steps, PURE);
    const x = microsPerTransition(c.machine, c.steps, XSTATE);
    if (i >= WARMUP_SAMPLES) c.pure.push(p), c.xstate.push(x);
  }
}
for (const c of chains) {
  console.log(`${String(c.steps).padStart(3)} steps: ${round(median(c.pure), 1)} µs per transition (median of ${SAMPLES}); through xstate's transition() ${round(median(c.xstate), 1)} µs`);
}
