import type { NormalizedPlaybook, NormalizedStep } from '../src/dsl/parse-playbook.ts';
import { CODE } from './error-codes.ts';
import { MAX_IMMEDIATE_STEPS_PER_EVENT, STEP_CYCLE_ERROR } from './execution/actions.ts';
import { stepNamed } from './execution/step-index.ts';
import type { PathsReport, SimulatedPath } from './simulated-path.ts';

// A path the machine ends with step_cycle fails whatever the data: its decisions were all taken
// on values the playbook itself holds (one reading a start's workload or a result stops the path).
// Registration refuses it, where the author can fix it, rather than every run failing.

/**
 * The place and words of a registration problem when some simulated path (`report`, from
 * registrationPaths) fails with step_cycle: the arc that closes its cycle of steps without a task,
 * else the step where too many such steps in a row ended it; null when no path does.
 */
export function stepCycleProblem(pb: NormalizedPlaybook, report: PathsReport): { path: string; message: string } | null {
  const failed = report.paths.find((p) => p.error?.code === CODE.step_cycle);
  if (!failed) return null;
  const index = (step: string) => pb.workflow.findIndex((s) => s.step === step);
  const errors = failed.outcomes.filter((o) => o.outcome !== 'ok');
  const when = errors.length ? `a run whose ${errors.map((o) => `step ${o.step} ends ${o.outcome}`).join(', ')}` : 'every run';
  const steps = failed.path;
  const again = steps.findIndex((s, i) => steps.indexOf(s) < i);
  if (again > 0) {
    const cycle = steps.slice(steps.indexOf(steps[again]), again + 1);
    return {
      path: `workflow[${index(steps[again - 1])}].next`,
      message: `closes a cycle of steps that run no task (${cycle.join(' → ')}) and never leave it: ${when} fails step_cycle there (${failed.error?.message}); give one of them a tool or a wait, or an arc out whose when ends the cycle`,
    };
  }
  const last = failed.error?.step ?? steps[steps.length - 1];
  return {
    path: `workflow[${index(last)}]`,
    message: `${when} fails step_cycle at this step (${failed.error?.message}): ${steps.length} steps in a row run no task (${steps[0]} → … → ${last}); give one of them a tool or a wait`,
  };
}

/**
 * The step a run of `step` enters in the same event, whatever the data, or null when that is not
 * certain: the machine ends a step with no task and no wait `ok` as it enters it (startRun), and
 * then takes its first arc when that arc has no `when` (it holds on ok) and no `set` (whose render
 * may fail), unless an inclusive fork takes others with it (evaluateArcs).
 */
function enteredAtOnce(step: NormalizedStep): string | null {
  const first = step.next.arcs[0];
  if (step.tasks.length > 0 || step.wait || !first || first.when !== undefined || first.set !== undefined) return null;
  return step.next.mode === 'exclusive' || step.next.arcs.length === 1 ? first.step : null;
}

/**
 * The path every run of the playbook takes when its entry step leads, through steps entered at
 * once (enteredAtOnce), to more than MAX_IMMEDIATE_STEPS_PER_EVENT steps in its first event: the
 * machine fails it step_cycle at the step past them, before any command or decision. Null
 * otherwise (the simulation judges). It is what registrationPaths' simulation finds, read off the
 * graph in at most that many steps: the machine's walk of them costs a second of the server's
 * thread (test/unit/machines/step-cycle-at-entry.test.ts checks both agree).
 */
export function entryStepCycle(pb: NormalizedPlaybook): SimulatedPath | null {
  const path: string[] = [];
  let next: string | null = pb.entry;
  while (next !== null) {
    if (path.length === MAX_IMMEDIATE_STEPS_PER_EVENT) return { status: 'failed', path, outcomes: [], cut: false, error: { ...STEP_CYCLE_ERROR, step: next } };
    path.push(next);
    next = enteredAtOnce(stepNamed(pb, next));
  }
  return null;
}
