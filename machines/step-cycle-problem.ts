import type { NormalizedPlaybook } from '../src/dsl/parse-playbook.ts';
import { CODE } from './error-codes.ts';
import type { PathsReport } from './simulate-playbook.ts';

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
