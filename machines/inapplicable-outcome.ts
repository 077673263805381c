import type { NormalizedStep } from '../src/dsl/parse-playbook.ts';
import type { SimulatedOutcome } from './simulated-outcome.ts';

// Which outcomes a step can have in a simulation (`svc simulate --outcome`, simulatePlaybook's
// outcomes; the console offers only these). The machine takes any, as a run cannot end them: a
// timer fires whatever is chosen, a signal wait without `timeout` gets its signal, a signal wait's
// `error` times out, a task step's `timeout` is an error. Typed by a user, such an outcome was
// dropped or reread without a word: `approve=error` (meant as a rejection) simulated the timeout path.

/** Why `given` cannot end a command (or wait) of `step` in a run, or undefined when it can. */
export function inapplicableOutcome(step: NormalizedStep, given: SimulatedOutcome): string | undefined {
  // A failure with a code is a failure: a wait has none, a task step has it.
  const outcome = given === 'ok' || given === 'timeout' ? given : 'error';
  const wait = step.wait;
  if (wait?.kind === 'timer') {
    return outcome === 'ok' ? undefined : `${step.step} waits for a time, and its timer fires (ok)`;
  }
  if (wait?.kind === 'signal') {
    const ends = wait.timeoutMs === null ? 'its signal comes (ok): without a timeout it never times out' : 'its signal comes (ok) or it times out (timeout)';
    if (outcome === 'error' || (outcome === 'timeout' && wait.timeoutMs === null)) return `${step.step} waits for signal ${wait.signal}, and ${ends}`;
    return undefined;
  }
  // A step without `tool` issues no command: nothing of it can fail, and the simulation has no
  // command to give the outcome to, so an `error` asked of it was dropped.
  if (step.tasks.length === 0) {
    return outcome === 'ok' ? undefined : `${step.step} runs no task (it has no tool), so it always ends ok and follows its arcs`;
  }
  if (outcome === 'timeout' && !step.tasks.some((t) => t.kind === 'playbook' && t.timeout_seconds !== undefined)) {
    return `only a signal wait with a timeout, or a playbook task with timeout_seconds, times out; ${step.step}'s tasks end ok or error (a task's own timeout is an error)`;
  }
  return undefined;
}
