import { isObject } from '../objects.ts';
import type { Problem } from './reference-problems.ts';
import { TEMPLATE_MARK } from './template-ast.ts';
import { waitTimeOf } from './wait-time.ts';

/**
 * Rules of a step's body (its `tool:`, `loop:` or `wait:`) that its shape cannot say: a wait waits
 * for exactly one thing (`for`, `until` or `signal`); an `until` written as it is (no template) is
 * a time, or every run would fail the step (wait_until); `timeout`, `approval` and `buffer` belong to
 * a signal; a waiting step runs no tool and no loop (the wait is its body); a loop runs its step's
 * tool once per item, so a step with a loop has a tool (without one the loop would be ignored).
 */
export function waitProblems(document: unknown): Problem[] {
  if (!isObject(document) || !Array.isArray(document.workflow)) return [];
  const problems: Problem[] = [];
  document.workflow.forEach((step, i) => {
    if (isObject(step) && step.wait === undefined && step.loop !== undefined && step.tool === undefined) {
      problems.push({ path: `workflow[${i}].loop`, message: 'a loop runs the step\'s tool once per item: this step has no tool' });
    }
    if (!isObject(step) || !isObject(step.wait)) return;
    const path = `workflow[${i}].wait`;
    const wait = step.wait;
    const kinds = (['for', 'until', 'signal'] as const).filter((k) => wait[k] !== undefined);
    if (kinds.length !== 1) problems.push({ path, message: kinds.length === 0 ? 'must say what it waits for: for, until or signal' : `must wait for one thing, not ${kinds.join(' and ')}` });
    if (typeof wait.until === 'string' && wait.until !== '' && !TEMPLATE_MARK.test(wait.until) && waitTimeOf(wait.until) === null) {
      problems.push({ path: `${path}.until`, message: `must be a time: ISO 8601 with its offset (2026-12-01T06:00:00+01:00, 2026-12-01 05:00Z) on a real day in the years 0001 to 9999, or a template giving one or epoch milliseconds; got ${JSON.stringify(wait.until)}, which every run would fail on (wait_until)` });
    }
    if (wait.signal === undefined) {
      for (const k of ['timeout', 'approval', 'buffer'] as const) if (wait[k] !== undefined) problems.push({ path: `${path}.${k}`, message: 'applies only to a signal wait (wait.signal)' });
    }
    if (step.tool !== undefined) problems.push({ path: `workflow[${i}].tool`, message: 'a step that waits runs no tool: put the tool in the step after it' });
    if (step.loop !== undefined) problems.push({ path: `workflow[${i}].loop`, message: 'a step that waits has no loop' });
  });
  return problems;
}
