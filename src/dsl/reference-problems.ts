import { isObject } from '../objects.ts';
import { SECRET_PROVIDER_NAMES, SECRET_PROVIDERS, secretProvider } from './secret-providers.ts';
import { didYouMean } from './unknown-field-message.ts';

/**
 * One thing wrong with a document; `path` is like `workflow[2].tool[0].kind`, `$` for the root;
 * `line` and `column` (1-based) where that path starts in the text, once parsePlaybook placed it.
 */
export type Problem = {
  path: string;
  message: string;
  line?: number;
  column?: number;
  /** A place inside the value at `path` (a template's own line and column), which placeProblems makes `line` and `column`. */
  within?: { line: number; column: number };
};

type Entry = { value: unknown; path: string };

const nonEmptyString = (value: unknown): value is string => typeof value === 'string' && value !== '';

/**
 * Rules that relate parts of a document to each other, which a shape schema cannot say: unique
 * step, task and keychain names, arcs to existing steps, a tool name for mcp `tools/call`.
 * Reads the raw parsed YAML and skips whatever is malformed (the shape check reports that), so
 * these problems are listed together with the shape problems of the same document.
 */
export function referenceProblems(document: unknown): Problem[] {
  if (!isObject(document)) return [];
  const problems: Problem[] = [];
  const steps = Array.isArray(document.workflow) ? document.workflow.map((value, i) => ({ value, path: `workflow[${i}]` })) : [];

  const stepIndex = new Map<string, number>();
  steps.forEach(({ value }, i) => {
    const name = isObject(value) ? value.step : undefined;
    if (!nonEmptyString(name)) return;
    const first = stepIndex.get(name);
    if (first === undefined) stepIndex.set(name, i);
    else problems.push({ path: `workflow[${i}].step`, message: `duplicate step name '${name}' (first at workflow[${first}])` });
  });

  for (const { value: step, path } of steps) {
    if (!isObject(step)) continue;
    const stepName = nonEmptyString(step.step) ? step.step : '?';
    const taskIndex = new Map<string, number>();
    tasksOf(step.tool, `${path}.tool`).forEach(({ value: task, path: taskPath }, t) => {
      if (!isObject(task)) return;
      // Same default as normalization: an unnamed task is `task_<index>`.
      const name = task.name === undefined ? `task_${t}` : task.name;
      if (nonEmptyString(name)) {
        const first = taskIndex.get(name);
        if (first === undefined) taskIndex.set(name, t);
        else problems.push({ path: `${taskPath}.name`, message: `duplicate task name '${name}' in step '${stepName}' (first at tool[${first}])` });
      }
      if (task.kind === 'mcp' && task.method === 'tools/call' && task.tool === undefined) {
        problems.push({ path: `${taskPath}.tool`, message: 'is required when method is tools/call' });
      }
    });
    for (const arc of arcsOf(step.next, `${path}.next`)) {
      if (stepIndex.has(arc.step)) continue;
      // A misspelt target (`next: repot`) is named as `steps.repot` in a template would be.
      problems.push({ path: arc.path, message: `arc to unknown step '${arc.step}'${didYouMean(arc.step, stepIndex.keys())}` });
    }
  }

  // Only simulation reads `examples:`, by step name: one for a misspelt step was never used, silently.
  for (const name of isObject(document.examples) ? Object.keys(document.examples) : []) {
    if (stepIndex.has(name)) continue;
    const path = /^[A-Za-z_][A-Za-z0-9_]*$/.test(name) ? `examples.${name}` : `examples[${JSON.stringify(name)}]`;
    problems.push({ path, message: `no step '${name}' in the workflow${didYouMean(name, stepIndex.keys())}` });
  }

  const keychain = Array.isArray(document.keychain) ? document.keychain : [];
  const keychainIndex = new Map<string, number>();
  keychain.forEach((entry, i) => {
    const name = isObject(entry) ? entry.name : undefined;
    if (!nonEmptyString(name)) return;
    const first = keychainIndex.get(name);
    if (first === undefined) keychainIndex.set(name, i);
    else problems.push({ path: `keychain[${i}].name`, message: `duplicate keychain entry name '${name}' (first at keychain[${first}])` });
  });
  keychain.forEach((entry, i) => problems.push(...secretManagerProblems(entry, `keychain[${i}]`)));
  return problems;
}

/**
 * A `secret_manager` entry the worker could never read: no `provider`, or a literal one of no
 * supported secret manager (`gpc`), or no `map` of what to read. Registered, every run using it
 * failed. A templated provider is checked when the worker renders it.
 */
function secretManagerProblems(entry: unknown, path: string): Problem[] {
  if (!isObject(entry) || entry.kind !== 'secret_manager') return [];
  const problems: Problem[] = [];
  const known = `one of ${SECRET_PROVIDERS.join(', ')}`;
  if (entry.provider === undefined) problems.push({ path: `${path}.provider`, message: `is required for a secret_manager entry (${known})` });
  else if (nonEmptyString(entry.provider) && !isTemplated(entry.provider) && !secretProvider(entry.provider)) {
    problems.push({ path: `${path}.provider`, message: `must be ${known} (or ${SECRET_PROVIDER_NAMES.filter((n) => !(SECRET_PROVIDERS as readonly string[]).includes(n)).join(', ')}), got '${entry.provider}'${didYouMean(entry.provider, SECRET_PROVIDER_NAMES)}` });
  }
  if (entry.map === undefined || (isObject(entry.map) && Object.keys(entry.map).length === 0)) {
    problems.push({ path: `${path}.map`, message: 'is required for a secret_manager entry: the fields to read, each a secret path' });
  }
  return problems;
}

const isTemplated = (text: string): boolean => text.includes('{{') || text.includes('{%');

/** `tool` is a list of tasks or a single task object. */
function tasksOf(tool: unknown, path: string): Entry[] {
  if (Array.isArray(tool)) return tool.map((value, i) => ({ value, path: `${path}[${i}]` }));
  return isObject(tool) ? [{ value: tool, path }] : [];
}

/** The target step of each well-formed arc of every form of `next`, with the path naming it. */
function arcsOf(next: unknown, path: string): { step: string; path: string }[] {
  const arc = (raw: unknown, arcPath: string): { step: string; path: string }[] => {
    if (nonEmptyString(raw)) return [{ step: raw, path: arcPath }];
    if (isObject(raw) && nonEmptyString(raw.step)) return [{ step: raw.step, path: `${arcPath}.step` }];
    return [];
  };
  if (Array.isArray(next)) return next.flatMap((raw, i) => arc(raw, `${path}[${i}]`));
  if (isObject(next)) return Array.isArray(next.arcs) ? next.arcs.flatMap((raw, i) => arc(raw, `${path}.arcs[${i}]`)) : [];
  return arc(next, path);
}
