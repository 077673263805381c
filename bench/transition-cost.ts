// `node bench/transition-cost.ts`: what one transition of the execution machine costs in CPU, for
// sequential chains as long as the bench's (and shorter), folded the way routing folds them
// (actors/pure-transition.ts, xstate's public transition()). Pure, no database. Prints µs per
// transition, and what xstate's throwaway actor (built by every transition() call) costs alone.
import { createActor, type AnyStateMachine } from 'xstate';
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

/** Starts an execution and completes each command it issues until it ends; returns the transitions taken. */
function fold(machine: ExecutionMachine, steps: number): number {
  let [snapshot, actions] = pureInitialTransition(machine, INPUT);
  let transitions = 1;
  for (;;) {
    const command = actions.flatMap((a) => (a.type === 'effect' ? [a.params as Effect] : [])).find((e) => e.type === 'issueCommand');
    if (command?.type !== 'issueCommand') break;
    const tasks: Record<string, TaskOutcome> = Object.fromEntries(command.tasks.map((t) => [t.name, { status: 'ok', data: null }]));
    [snapshot, actions] = pureTransition(machine, snapshot, { type: EVENT.commandCompleted, seq: command.seq, tasks });
    transitions++;
  }
  if (snapshot.status !== 'done' || transitions !== steps + 1) throw new Error(`a chain of ${steps} ended ${snapshot.status} after ${transitions} transitions`);
  return transitions;
}

function microsPerTransition(machine: ExecutionMachine, steps: number): number {
  let transitions = 0;
  const t0 = performance.now();
  while (transitions < TRANSITIONS_PER_SAMPLE) transitions += fold(machine, steps);
  return ((performance.now() - t0) * 1000) / transitions;
}

// What transition() adds to each call: an actor built from the machine without input.
function microsPerThrowawayActor(machine: ExecutionMachine): number {
  const logic: AnyStateMachine = machine;
  const t0 = performance.now();
  for (let i = 0; i < TRANSITIONS_PER_SAMPLE; i++) createActor(logic);
  return ((performance.now() - t0) * 1000) / TRANSITIONS_PER_SAMPLE;
}

const chains = CHAIN_LENGTHS.map((steps) => ({ steps, machine: chainMachine(steps), transition: [] as number[], actor: [] as number[] }));
for (let i = 0; i < WARMUP_SAMPLES + SAMPLES; i++) {
  for (const c of chains) {
    const t = microsPerTransition(c.machine, c.steps);
    const a = microsPerThrowawayActor(c.machine);
    if (i >= WARMUP_SAMPLES) c.transition.push(t), c.actor.push(a);
  }
}
for (const c of chains) {
  console.log(`${String(c.steps).padStart(3)} steps: ${round(median(c.transition), 1)} µs per transition (median of ${SAMPLES}); xstate's throwaway actor ${round(median(c.actor), 1)} µs of it`);
}
