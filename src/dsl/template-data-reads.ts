import { isObject } from '../objects.ts';
import { TEMPLATE_MARK } from './template-ast.ts';
import { parseTemplate } from './template-parser.ts';

/**
 * Whose results the templates inside a value read: `steps.<name>.<anything but status>` reads
 * that step's data, `outcome`/`tasks` (other than `outcome.status` and a task's status) and `signal` the current step's, `vars`
 * whatever an arc `set` put there. `steps` read whole (or a template that fails to parse) reads all.
 * `workload`, `args`: the names read as `workload.<name>`, `args.<name>` (a start may give them).
 * `start`: the roots read otherwise that a start decides (`workload` or `args` whole or by a
 * computed key, `execution`: a child's parent). `errors`: the steps whose `error` is read
 * (`steps.<name>.error`; null: `outcome.error`, the current step's), which no example result
 * gives (absent when none is read).
 */
export type DataReads = {
  steps: Set<string>;
  allSteps: boolean;
  own: boolean;
  vars: boolean;
  workload: Set<string>;
  args: Set<string>;
  start: Set<string>;
  tasks: TaskRead[];
  errors?: (string | null)[];
};

/** Roots whose value is the start's (its payload, where it runs): a simulation with no start known cannot decide on them. */
const START_ROOTS: ReadonlySet<string> = new Set(['workload', 'args', 'execution']);

/**
 * A read of one task's outcome other than its status: `outcome.tasks.<task>` or `tasks.<task>`
 * (`step` null: the current step's) or `steps.<step>.tasks.<task>`; `task` null when the name is
 * not a literal.
 * An example result is the step's last task's data only, so the others' are not known.
 */
export type TaskRead = { step: string | null; task: string | null };

type Node = Record<string, unknown>;

const isNode = isObject;
const literalKey = (n: Node): string | undefined => (isNode(n.key) && n.key.type === 'literal' && typeof n.key.value === 'string' ? n.key.value : undefined);
const isName = (x: unknown, name: string): boolean => isNode(x) && x.type === 'name' && x.name === name;

/** Tests whose answer on a step's outcome or error is known from whether it ran and its status. */
const OUTCOME_TESTS: ReadonlySet<string> = new Set(['defined', 'undefined', 'none']);
/** `steps.<name>` (a literal name). */
const isStepOutcome = (x: unknown): boolean => isNode(x) && x.type === 'get' && isName(x.target, 'steps') && literalKey(x) !== undefined;
/** `outcome.error` or `steps.<name>.error`. */
const isErrorOf = (x: unknown): boolean => isNode(x) && x.type === 'get' && literalKey(x) === 'error' && (isName(x.target, 'outcome') || isStepOutcome(x.target));

/** The data reads of every template string in `value` (see DataReads). */
export function templateDataReads(value: unknown): DataReads {
  const out: DataReads = { steps: new Set(), allSteps: false, own: false, vars: false, workload: new Set(), args: new Set(), start: new Set(), tasks: [] };
  // Walks any AST node generically; `parent` tells `steps.x.status` from `steps.x.result`.
  const walk = (x: unknown, parent: Node | undefined): void => {
    if (Array.isArray(x)) {
      for (const item of x) walk(item, parent);
      return;
    }
    if (!isNode(x)) return;
    // The outermost member of a chain says what of a task is read (`.status` is known).
    const inner = parent?.type === 'get' && parent.target === x;
    if (x.type === 'get' && !inner) {
      // A task's status (`outcome.tasks.a.status`, `steps.x.tasks.a.status`) is known as a step's is: no data read.
      if (isTaskStatus(x)) return;
      const read = taskRead(x);
      if (read) out.tasks.push(read);
    }
    // Whether a step has an outcome (`steps.x is defined`, `'x' in steps`) is known as its status
    // is: it ran or not; so is whether it has an error (`outcome.error is none`): it failed or not.
    if (x.type === 'test' && OUTCOME_TESTS.has(String(x.name)) && (isStepOutcome(x.target) || isErrorOf(x.target))) return;
    if (x.type === 'in' && isName(x.right, 'steps') && isNode(x.left) && x.left.type === 'literal') return;
    // The field of a step's outcome read next: `.status` is known, `.error` is the step's error.
    const field = parent?.type === 'get' && parent.target === x ? literalKey(parent) : undefined;
    if (x.type === 'get' && isName(x.target, 'steps') && literalKey(x) !== undefined) {
      if (field === 'error') (out.errors ??= []).push(literalKey(x)!);
      else if (field !== 'status') out.steps.add(literalKey(x)!);
      return;
    }
    if (x.type === 'get' && (isName(x.target, 'workload') || isName(x.target, 'args')) && literalKey(x) !== undefined) {
      out[isName(x.target, 'workload') ? 'workload' : 'args'].add(literalKey(x)!);
      return;
    }
    if (x.type === 'name') {
      if (x.name === 'steps') out.allSteps = true;
      else if (x.name === 'outcome' && field === 'error') (out.errors ??= []).push(null);
      else if ((x.name === 'outcome' && field !== 'status') || x.name === 'tasks' || x.name === 'signal') out.own = true;
      else if (x.name === 'vars') out.vars = true;
      else if (typeof x.name === 'string' && START_ROOTS.has(x.name)) out.start.add(x.name);
      return;
    }
    for (const child of Object.values(x)) walk(child, x);
  };
  const visit = (v: unknown): void => {
    if (typeof v === 'string') {
      if (!TEMPLATE_MARK.test(v)) return;
      try {
        walk(parseTemplate(v).body, undefined);
      } catch {
        out.allSteps = true;
        out.own = true;
      }
    } else if (Array.isArray(v)) for (const x of v) visit(x);
    else if (isNode(v)) for (const x of Object.values(v)) visit(x);
  };
  visit(value);
  return out;
}

/** The names along a member chain (`a.b['c']` is a, b, c; null for a key that is not a literal), or null when its root is no name. */
function chainOf(x: Node): (string | null)[] | null {
  if (x.type === 'name' && typeof x.name === 'string') return [x.name];
  if (x.type !== 'get' || !isNode(x.target)) return null;
  const target = chainOf(x.target);
  return target ? [...target, literalKey(x) ?? null] : null;
}

/** Where a chain's task name is (`outcome.tasks.<task>`: 1, `steps.<step>.tasks.<task>`: 2), or -1 when it reads no task. */
function taskAt(root: string | null, keys: (string | null)[]): number {
  return root === 'outcome' && keys[0] === 'tasks' ? 1 : root === 'steps' && typeof keys[0] === 'string' && keys[1] === 'tasks' ? 2 : -1;
}

/** Whether a member chain, all literal keys, is one task's status and nothing more. */
function isTaskStatus(x: Node): boolean {
  const chain = chainOf(x);
  if (!chain || chain.includes(null)) return false;
  const [root, ...keys] = chain;
  const at = taskAt(root, keys);
  return at >= 0 && keys.length === at + 2 && keys[at + 1] === 'status';
}

/** The task a member chain reads, unless it reads only that task's status. */
function taskRead(x: Node): TaskRead | null {
  const chain = chainOf(x);
  if (!chain) return null;
  const [root, ...keys] = chain;
  // `tasks.<task>`: the current step's earlier task, as a later task's limit key or args read it.
  if (root === 'tasks') return keys[1] === 'status' ? null : { step: null, task: keys[0] ?? null };
  const at = taskAt(root, keys);
  if (at < 0 || keys[at + 1] === 'status') return null;
  return { step: root === 'outcome' ? null : (keys[0] ?? null), task: keys[at] ?? null };
}
