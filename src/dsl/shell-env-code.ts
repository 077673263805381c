import { isObject } from '../objects.ts';
import type { Problem } from './reference-problems.ts';
import { childPath } from './render.ts';
import { CODE_VARIABLE } from './shell-words.ts';
import { TEMPLATE_MARK } from './template-ast.ts';

// A shell expands the value of a prompt or of its start-up file's name as code (BASH_ENV, PS4,
// ./shell-words.ts): set in a shell task's `env:` from a template, a payload's `$( )` would run.
// A fixed value (a profile's path) is the author's code and stays allowed.

const MESSAGE = (name: string) =>
  `a template cannot set ${name}: the shell expands its value as code (command substitutions and all), so data would run; give it a fixed value, or pass the data in another variable that code reads`;

const holdsTemplate = (value: unknown): boolean => TEMPLATE_MARK.test(typeof value === 'string' ? value : (JSON.stringify(value) ?? ''));

/**
 * The names of a shell task's `env` (as written) whose value a template sets and a shell expands
 * as code. An `env` a template makes whole is named by what it `rendered` (its names are data too).
 */
export function templatedCodeVariables(written: unknown, rendered?: unknown): string[] {
  if (typeof written === 'string') return TEMPLATE_MARK.test(written) && isObject(rendered) ? Object.keys(rendered).filter((name) => CODE_VARIABLE.test(name)) : [];
  if (!isObject(written)) return [];
  return Object.entries(written)
    .filter(([name, value]) => CODE_VARIABLE.test(name) && holdsTemplate(value))
    .map(([name]) => name);
}

/** Throws when a shell task's rendered `env` would let data run as code (the worker's check, for what registration cannot see). */
export function refuseTemplatedCodeVariables(written: unknown, rendered: unknown): void {
  const [name] = templatedCodeVariables(written, rendered);
  if (name !== undefined) throw new Error(MESSAGE(name));
}

/** Registration's check: a shell task's `env:` mapping that sets such a variable from a template. */
export function shellEnvProblems(document: unknown): Problem[] {
  if (!isObject(document) || !Array.isArray(document.workflow)) return [];
  const problems: Problem[] = [];
  document.workflow.forEach((step, i) => {
    if (!isObject(step)) return;
    const tools = Array.isArray(step.tool) ? step.tool.map((task, t) => [task, `workflow[${i}].tool[${t}]`] as const) : [[step.tool, `workflow[${i}].tool`] as const];
    for (const [task, path] of tools) {
      if (!isObject(task) || task.kind !== 'shell') continue;
      for (const name of templatedCodeVariables(task.env)) problems.push({ path: childPath(`${path}.env`, name), message: MESSAGE(name) });
    }
  });
  return problems;
}
