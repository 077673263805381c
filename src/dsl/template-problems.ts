import { childPath, conditionSource } from './render.ts';
import { TEMPLATE_MARK, TemplateSyntaxError } from './template-ast.ts';
import { parseTemplate } from './template-parser.ts';
import type { Problem } from './reference-problems.ts';
import { isObject } from '../objects.ts';

/** Task fields that are never rendered: `retry` is, but only its `when`, as a condition. */
const UNRENDERED_TASK_FIELDS = new Set(['name', 'kind', 'retry']);

/**
 * Templates of a raw playbook document that could never render: a syntax error, an unknown filter
 * or test, a tag templates may not use. Checks every value that is rendered (task fields, retry
 * and arc `when`, arc `set`, loop `in`, `wait.until`, keychain definitions, the `concurrency` and `debounce`
 * keys); `workload` is data, never rendered.
 */
export function templateProblems(document: unknown): Problem[] {
  const problems: Problem[] = [];
  // `shift`: columns the checked source adds before the value on its first line (a condition's `{{ `).
  const check = (source: string, path: string, shift = 0): void => {
    try {
      parseTemplate(source);
    } catch (error) {
      if (!(error instanceof TemplateSyntaxError)) throw error;
      const at = error.at;
      const within = at && (at.line > 1 ? at : { line: 1, column: Math.max(1, at.column - shift) });
      problems.push({ path, message: error.message, ...(within && { within }) });
    }
  };
  const values = (value: unknown, path: string): void => {
    if (typeof value === 'string') {
      if (TEMPLATE_MARK.test(value)) check(value, path);
    } else if (Array.isArray(value)) value.forEach((item, i) => values(item, `${path}[${i}]`));
    else if (isObject(value)) for (const [key, item] of Object.entries(value)) values(item, childPath(path, key));
  };
  const condition = (value: unknown, path: string): void => {
    if (typeof value === 'string') {
      const source = conditionSource(value);
      check(source, path, source === value ? 0 : '{{ '.length);
    }
  };

  if (!isObject(document)) return problems;
  const workflow = Array.isArray(document.workflow) ? document.workflow : [];
  workflow.forEach((step, i) => {
    if (!isObject(step)) return;
    const path = `workflow[${i}]`;
    const tools = step.tool;
    const tasks = Array.isArray(tools) ? tools.map((task, t) => [task, `${path}.tool[${t}]`] as const) : [[tools, `${path}.tool`] as const];
    for (const [task, taskPath] of tasks) {
      if (!isObject(task)) continue;
      for (const [key, value] of Object.entries(task)) if (!UNRENDERED_TASK_FIELDS.has(key)) values(value, childPath(taskPath, key));
      if (isObject(task.retry)) condition(task.retry.when, `${taskPath}.retry.when`);
    }
    if (isObject(step.loop)) values(step.loop.in, `${path}.loop.in`);
    if (isObject(step.wait)) values(step.wait.until, `${path}.wait.until`);
    const next = step.next;
    const arcs = Array.isArray(next) ? next.map((arc, a) => [arc, `${path}.next[${a}]`] as const) : isObject(next) && Array.isArray(next.arcs) ? next.arcs.map((arc, a) => [arc, `${path}.next.arcs[${a}]`] as const) : [];
    for (const [arc, arcPath] of arcs) {
      if (!isObject(arc)) continue;
      condition(arc.when, `${arcPath}.when`);
      values(arc.set, `${arcPath}.set`);
    }
  });
  const keychain = Array.isArray(document.keychain) ? document.keychain : [];
  keychain.forEach((entry, i) => values(entry, `keychain[${i}]`));
  for (const field of ['concurrency', 'debounce'] as const) {
    const spec = document[field];
    if (isObject(spec)) values(spec.key, `${field}.key`);
  }
  return problems;
}
