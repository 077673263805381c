import * as v from 'valibot';
import { load, YAMLException } from 'js-yaml';
import {
  PlaybookDocumentSchema,
  type ArcDocument,
  type KeychainDefinition,
  type LoopSpec,
  type NextDocument,
  type PlaybookDocument,
  type PlaybookMetadata,
  type RetrySpec,
  type StepDocument,
  type TaskDocument,
} from './playbook.schema.ts';

export type { KeychainDefinition, LoopSpec, RetrySpec, PlaybookMetadata, TaskKind } from './playbook.schema.ts';

/** One thing wrong with a document; `path` is like `workflow[2].tool[0].kind`, `$` for the root. */
export type Problem = { path: string; message: string };

export type Arc = { step: string; when?: string; set?: Record<string, unknown> };
export type NextSpec = { mode: 'exclusive' | 'inclusive'; arcs: Arc[] };

type Normalize<T> = T extends unknown ? T & { name: string; retry: RetrySpec } : never;
/** A task with its name filled (`task_<index>` when absent) and retry defaults applied. */
export type NormalizedTask = Normalize<TaskDocument>;

export type NormalizedStep = {
  step: string;
  desc?: string;
  tasks: NormalizedTask[];
  loop?: LoopSpec;
  next: NextSpec;
};

export type NormalizedPlaybook = {
  apiVersion: string;
  kind: 'Playbook';
  metadata: PlaybookMetadata;
  workload: Record<string, unknown>;
  keychain: KeychainDefinition[];
  workflow: NormalizedStep[];
  /** Name of the first step to run: `start` when present, else the first step. */
  entry: string;
};

export type ParseResult = { ok: true; playbook: NormalizedPlaybook } | { ok: false; problems: Problem[] };

/**
 * Parses playbook YAML text, validates it and normalizes it. Never throws: every problem found
 * (shape first; then, when the shape is valid, cross-references) is returned with its path.
 */
export function parsePlaybook(text: string): ParseResult {
  let raw: unknown;
  try {
    raw = load(text);
  } catch (error) {
    return { ok: false, problems: [{ path: '$', message: describeYamlError(error) }] };
  }
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    return { ok: false, problems: [{ path: '$', message: 'the document must be a mapping' }] };
  }
  const parsed = v.safeParse(PlaybookDocumentSchema, raw);
  if (!parsed.success) {
    return { ok: false, problems: parsed.issues.map((issue) => ({ path: formatPath(issue.path), message: describeIssue(issue) })) };
  }
  const { playbook, paths } = normalize(parsed.output);
  const problems = semanticProblems(playbook, paths);
  return problems.length > 0 ? { ok: false, problems } : { ok: true, playbook };
}

/**
 * Names of keychain entries a task references (`keychain.<name>` or `keychain['<name>']` inside
 * `{{ }}` / `{% %}` of any of its strings), in order of first use, so a worker resolves only those.
 */
export function referencedKeychainNames(task: NormalizedTask): string[] {
  const names = new Set<string>();
  const reference = /(?<![\w.])keychain\s*(?:\.\s*([A-Za-z_][A-Za-z0-9_]*)|\[\s*(["'])([^"']+)\2\s*\])/g;
  const visit = (value: unknown): void => {
    if (typeof value === 'string') {
      for (const block of value.match(/\{\{[\s\S]*?\}\}|\{%[\s\S]*?%\}/g) ?? []) {
        for (const match of block.matchAll(reference)) names.add(match[1] ?? match[3]);
      }
    } else if (Array.isArray(value)) {
      value.forEach(visit);
    } else if (value !== null && typeof value === 'object') {
      Object.values(value).forEach(visit);
    }
  };
  visit(task);
  return [...names];
}

function describeYamlError(error: unknown): string {
  if (error instanceof YAMLException) {
    const where = error.mark ? ` at line ${error.mark.line + 1}, column ${error.mark.column + 1}` : '';
    return `YAML syntax error${where}: ${error.reason}`;
  }
  return `YAML syntax error: ${error instanceof Error ? error.message : String(error)}`;
}

function formatPath(path: readonly v.IssuePathItem[] | undefined): string {
  if (!path || path.length === 0) return '$';
  let out = '';
  for (const item of path) {
    const key = item.key;
    if (typeof key === 'number') out += `[${key}]`;
    else if (typeof key === 'string' && /^[A-Za-z_][A-Za-z0-9_]*$/.test(key)) out += out === '' ? key : `.${key}`;
    else out += `[${JSON.stringify(String(key))}]`;
  }
  return out;
}

// Valibot's default messages start with "Invalid "; schema-specific messages set in
// playbook.schema.ts are already written for people and are kept as they are.
function describeIssue(issue: v.BaseIssue<unknown>): string {
  if (issue.expected === 'never') return 'unknown field';
  if (!issue.message.startsWith('Invalid ')) return issue.message;
  const expected = (issue.expected ?? '').replace(/^\((.*)\)$/, '$1');
  if (issue.kind === 'schema' && issue.input === undefined) {
    return expected.startsWith('"') && expected.includes('|') ? `is required (one of ${expected})` : 'is required';
  }
  if (issue.type === 'picklist' || issue.type === 'variant' || issue.type === 'literal') {
    return `must be one of ${expected}, got ${issue.received}`;
  }
  return `expected ${expected}, got ${issue.received}`;
}

// Where each normalized arc and task came from in the document, for semantic problems.
type SourcePaths = Map<object, string>;

function normalize(doc: PlaybookDocument): { playbook: NormalizedPlaybook; paths: SourcePaths } {
  const paths: SourcePaths = new Map();
  const workflow = doc.workflow.map((step, index) => normalizeStep(step, `workflow[${index}]`, paths));
  const entry = workflow.some((step) => step.step === 'start') ? 'start' : workflow[0].step;
  const playbook: NormalizedPlaybook = {
    apiVersion: doc.apiVersion,
    kind: doc.kind,
    metadata: doc.metadata,
    workload: doc.workload,
    keychain: doc.keychain,
    workflow,
    entry,
  };
  return { playbook, paths };
}

function normalizeStep(step: StepDocument, path: string, paths: SourcePaths): NormalizedStep {
  const tools = step.tool === undefined ? [] : Array.isArray(step.tool) ? step.tool : [step.tool];
  const tasks = tools.map((task, index): NormalizedTask => {
    const normalized: NormalizedTask = {
      ...task,
      name: task.name ?? `task_${index}`,
      retry: task.retry ?? { attempts: 1, delay_seconds: 0, backoff: 1 },
    };
    paths.set(normalized, Array.isArray(step.tool) ? `${path}.tool[${index}]` : `${path}.tool`);
    return normalized;
  });
  const normalized: NormalizedStep = { step: step.step, tasks, next: normalizeNext(step.next, `${path}.next`, paths) };
  if (step.desc !== undefined) normalized.desc = step.desc;
  if (step.loop !== undefined) normalized.loop = step.loop;
  return normalized;
}

function normalizeNext(next: NextDocument | undefined, path: string, paths: SourcePaths): NextSpec {
  if (next === undefined) return { mode: 'exclusive', arcs: [] };
  const toArc = (raw: string | ArcDocument, arcPath: string): Arc => {
    const arc: Arc = typeof raw === 'string' ? { step: raw } : { ...raw };
    paths.set(arc, typeof raw === 'string' ? arcPath : `${arcPath}.step`);
    return arc;
  };
  if (typeof next === 'string') return { mode: 'exclusive', arcs: [toArc(next, path)] };
  if (Array.isArray(next)) return { mode: 'exclusive', arcs: next.map((raw, i) => toArc(raw, `${path}[${i}]`)) };
  return { mode: next.mode, arcs: next.arcs.map((raw, i) => toArc(raw, `${path}.arcs[${i}]`)) };
}

function semanticProblems(playbook: NormalizedPlaybook, paths: SourcePaths): Problem[] {
  const problems: Problem[] = [];
  const stepIndex = new Map<string, number>();
  playbook.workflow.forEach((step, i) => {
    const first = stepIndex.get(step.step);
    if (first === undefined) stepIndex.set(step.step, i);
    else problems.push({ path: `workflow[${i}].step`, message: `duplicate step name '${step.step}' (first at workflow[${first}])` });
  });
  playbook.workflow.forEach((step, i) => {
    const taskIndex = new Map<string, number>();
    step.tasks.forEach((task, t) => {
      const taskPath = paths.get(task) ?? `workflow[${i}].tool[${t}]`;
      const first = taskIndex.get(task.name);
      if (first === undefined) taskIndex.set(task.name, t);
      else problems.push({ path: `${taskPath}.name`, message: `duplicate task name '${task.name}' in step '${step.step}' (first at tool[${first}])` });
      if (task.kind === 'mcp' && task.method === 'tools/call' && task.tool === undefined) {
        problems.push({ path: `${taskPath}.tool`, message: 'is required when method is tools/call' });
      }
    });
    for (const arc of step.next.arcs) {
      if (!stepIndex.has(arc.step)) {
        problems.push({ path: paths.get(arc) ?? `workflow[${i}].next`, message: `arc to unknown step '${arc.step}'` });
      }
    }
  });
  const keychainIndex = new Map<string, number>();
  playbook.keychain.forEach((entry, i) => {
    const first = keychainIndex.get(entry.name);
    if (first === undefined) keychainIndex.set(entry.name, i);
    else problems.push({ path: `keychain[${i}].name`, message: `duplicate keychain entry name '${entry.name}' (first at keychain[${first}])` });
  });
  return problems;
}
