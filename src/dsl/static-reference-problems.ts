import { conditionSource } from './render.ts';
import { expressionText, TEMPLATE_MARK, type Expr, type Stmt } from './template-ast.ts';
import { parseTemplate } from './template-parser.ts';
import { TEMPLATE_ROOTS } from './playbook.schema.ts';
import type { Problem } from './reference-problems.ts';
import { isObject } from '../objects.ts';
import { closest, didYouMean } from './unknown-field-message.ts';

// Keys shorter than this are not taken for misspellings of a declared one (`x` beside `n`).
const MISSPELLING_MIN_CHARS = 4;

/** Functions every template may call. */
const TEMPLATE_FUNCTIONS = ['range', 'dict', 'namespace', 'caller'] as const;
/** Names a step's template reaches without defining them: the roots and the functions. */
const KNOWN_NAMES: ReadonlySet<string> = new Set([...TEMPLATE_ROOTS, ...TEMPLATE_FUNCTIONS]);
/** What a playbook's `concurrency.key` and `debounce.key` read: they are rendered at a start (src/flow/admission-of.ts). */
const START_ROOTS = ['workload', 'args'] as const;
/**
 * The roots each place renders over (machines/execution/step-work.ts baseRenderContext and
 * iterationContext, arcs.ts, src/worker/run-command.ts): a known root read where it is not given
 * (`outcome` in a task's command, `keychain` in an arc) is undefined at every run.
 */
const BASE_ROOTS = ['workload', 'args', 'vars', 'steps', 'execution'] as const;
const ARC_ROOTS = [...BASE_ROOTS, 'outcome', 'signal'] as const;
/** The fields of the `execution` root (baseRenderContext). */
const EXECUTION_FIELDS = ['id', 'path', 'catalog_id', 'parent_id', 'root_id'] as const;
/**
 * The fields of the roots the engine makes, each always there (machines/execution/types.ts): a
 * step's outcome (an arc's `outcome`, `steps.<name>`; `signal` only a signal's), a failed task's
 * outcome (`retry.when`'s `outcome`: `escaped` when the worker changed it), a signal (`role` is its
 * sender's), a loop's item (iterationContext). `said`: the fields a message lists.
 */
const STEP_OUTCOME = { name: "a step's outcome", fields: ['status', 'result', 'error', 'tasks', 'signal'], said: 4 } as const;
const ARC_OUTCOME = { ...STEP_OUTCOME, name: 'outcome' } as const;
const TASK_OUTCOME = { name: "a task's outcome", fields: ['status', 'data', 'error', 'escaped'], said: 3 } as const;
const SIGNAL = { name: 'signal', fields: ['name', 'payload', 'by', 'role'], said: 3 } as const;
const LOOP = { name: 'loop', fields: ['index', 'length', 'first', 'last', 'item'], said: 5 } as const;
type Fields = { readonly name: string; readonly fields: readonly string[]; readonly said: number };

/**
 * Where a template is read: the names defined there, the steps that may have run, the step (for
 * messages), what the place is and reads (for "not available here"), and for a task's fields the
 * tasks of its step that ran before it (`tasks.<name>`).
 */
type Scope = {
  names: ReadonlySet<string>;
  ran: (step: string) => boolean;
  step: string | null;
  field: string | null;
  reads?: string;
  tasks?: readonly string[];
  /** The fields of the roots the engine makes here; `signal: 'none'` in the arcs of a step that waits for no signal. */
  fields?: { outcome?: Fields; signal?: Fields | 'none'; loop?: Fields };
};

/**
 * References that can be known to be undefined when a playbook is registered (templates are
 * strict, DESIGN.md "Authoring"): a name no root, iterator or template variable defines (or a
 * root the field does not have: a `concurrency.key` is rendered at a start, before any step),
 * `workload.<key>` when the playbook declares `inputs:` (what a start may bring) and neither they
 * nor `workload:` hold that key, or without `inputs:` a key that is a misspelling of a `workload:` key, and `steps.<name>` of a step that does not exist or cannot have run before;
 * in a task's fields, arcs, loops, timers, keychain entries and the flow-control keys. Operands of
 * `| default` and `is defined` are exempt, as at render time: `warnings` lists those among them
 * that can never be defined where they are read (a root the place does not have, a step, task,
 * `vars` key or `execution` field that does not exist), whose guard then always takes its
 * undefined side (`outcome.error.message | default('')` in a task's field is always '').
 */
export function staticReferenceProblems(document: unknown): { problems: Problem[]; warnings: Problem[] } {
  const problems: Problem[] = [];
  const warnings: Problem[] = [];
  if (!isObject(document) || !Array.isArray(document.workflow)) return { problems, warnings };
  const steps = document.workflow.filter(isObject);
  if (steps.length !== document.workflow.length) return { problems, warnings };
  const names = steps.map((s) => (typeof s.step === 'string' ? s.step : ''));
  const leadsTo = arcPaths(steps, names);
  // Without inputs: a start's payload may bring any key, so only render time can tell.
  const declared = isObject(document.inputs) ? new Set([...Object.keys(isObject(document.workload) ? document.workload : {}), ...Object.keys(isObject(document.inputs) ? document.inputs : {})]) : undefined;
  // Without inputs, a key close to one `workload:` declares is a misspelling of it (a key only a
  // start brings is free to be anything else): `endpont` beside `endpoint`. Short keys are left alone.
  const workloadKeys = Object.keys(isObject(document.workload) ? document.workload : {});
  const misspelt = (key: string): string | undefined => (declared || key.length < MISSPELLING_MIN_CHARS || workloadKeys.includes(key) ? undefined : closest(key, workloadKeys));
  // `vars` starts empty and only arcs' `set` write it: a key no arc sets is never there.
  const varKeys = new Set(steps.flatMap((step) => arcsOf(step.next).flatMap((arc) => (isObject(arc) && isObject(arc.set) ? Object.keys(arc.set) : []))));

  const check = (source: string, where: string, scope: Scope): void => {
    for (const { expr, text, guarded } of undefinedReads(source, scope.names)) {
      const root = expr.name;
      const key = expr.key;
      if (guarded) {
        const never = neverDefined(text, root, key, expr.field, scope);
        if (never) warnings.push({ path: where, message: `'${text}' is never defined here (${never}): its | default(...) or is defined always takes the undefined side` });
        continue;
      }
      let missing: string | undefined;
      const unknownField = root === undefined || key === undefined ? undefined : fieldMissing(root, key, expr.field, scope);
      if (expr.field !== undefined) missing = unknownField && `'${text}' is undefined: ${unknownField}`;
      else if (unknownField) missing = `'${text}' is undefined: ${unknownField}`;
      else if (root === undefined) missing = KNOWN_NAMES.has(text) && scope.field ? `'${text}' is not available here: ${scope.field} reads ${START_ROOTS.join(' and ')}` : KNOWN_NAMES.has(text) && scope.reads ? `'${text}' is not available here: ${scope.reads}` : `'${text}' is undefined${didYouMean(text, [...scope.names])}`;
      else if (root === 'vars' && key !== undefined && !varKeys.has(key)) missing = `'${text}' is undefined: no arc sets '${key}'${varKeys.size ? ` (arcs set ${[...varKeys].join(', ')})` : ''} (use | default(...) for what may be absent)`;
      else if (root === 'execution' && key !== undefined && !(EXECUTION_FIELDS as readonly string[]).includes(key)) missing = `'${text}' is undefined: execution has ${EXECUTION_FIELDS.join(', ')}`;
      else if (root === 'tasks' && key !== undefined && scope.tasks && !scope.tasks.includes(key)) missing = `'${text}' is undefined: no task '${key}' runs before this one in step '${scope.step}'${scope.tasks.length ? ` (earlier: ${scope.tasks.join(', ')})` : ''}`;
      else if (root === 'workload' && key !== undefined && declared && !declared.has(key)) missing = `'${text}' is undefined: the workload declares no '${key}' ${didYouMean(key, [...declared]).trim() || '(declare it under workload: or inputs:, or use | default(...))'}`;
      else if (root === 'workload' && key !== undefined && misspelt(key)) missing = `'${text}' is undefined: the workload declares no '${key}' (did you mean '${misspelt(key)}'?)`;
      else if (root === 'steps' && key !== undefined && !names.includes(key)) missing = `'${text}' is undefined: there is no step '${key}'${didYouMean(key, names)}`;
      else if (root === 'steps' && key !== undefined && !scope.ran(key)) missing = `'${text}' is undefined: step '${key}' cannot have run before step '${scope.step}'`;
      if (missing) problems.push({ path: where, message: missing });
    }
  };

  steps.forEach((step, i) => {
    const name = names[i];
    const path = `workflow[${i}]`;
    const iterator = isObject(step.loop) ? (typeof step.loop.iterator === 'string' ? step.loop.iterator : 'item') : undefined;
    // Only a looped step's tasks see `loop` and the iterator.
    const looped = iterator ? ['loop', iterator] : [];
    // A step may have run before this one when an arc path leads from it here.
    const before = (step: string) => leadsTo(step, name);
    const scope = (ran: (step: string) => boolean, roots: readonly string[], reads: string, tasks?: readonly string[], fields: Scope['fields'] = { loop: LOOP }): Scope => ({ names: new Set([...roots, ...TEMPLATE_FUNCTIONS]), ran, step: name, field: null, reads: `${reads} reads ${roots.join(', ')}`, tasks, fields });
    // An arc's `signal` is the one that ended its step's wait: none for a step that waits for none.
    const arcFields: Scope['fields'] = { outcome: ARC_OUTCOME, signal: isObject(step.wait) && step.wait.signal !== undefined ? SIGNAL : 'none' };
    const tasks = Array.isArray(step.tool) ? step.tool.map((t, n) => [t, `${path}.tool[${n}]`] as const) : [[step.tool, `${path}.tool`] as const];
    const taskNames = tasks.map(([task], n) => (isObject(task) && typeof task.name === 'string' ? task.name : `task_${n}`));
    tasks.forEach(([task, taskPath], n) => {
      if (!isObject(task)) return;
      const earlier = taskNames.slice(0, n);
      // A worker renders a task with the keychain; the server renders a playbook task's path and
      // args and a limit's key, without it.
      const onServer = (key: string) => task.kind === 'playbook' || key === 'limit';
      const taskRoots = (key: string) => [...BASE_ROOTS, 'tasks', ...looped, ...(onServer(key) ? [] : ['keychain'])];
      for (const [key, value] of Object.entries(task)) {
        if (key === 'name' || key === 'kind' || key === 'retry') continue;
        forEachTemplate(value, `${taskPath}.${key}`, (source, where) => check(source, where, scope(before, taskRoots(key), "a task's field", earlier)));
      }
      if (isObject(task.retry) && typeof task.retry.when === 'string') check(conditionSource(task.retry.when), `${taskPath}.retry.when`, scope(before, [...taskRoots('retry'), 'outcome'], 'retry.when', earlier, { outcome: TASK_OUTCOME, loop: LOOP }));
    });
    if (isObject(step.wait)) forEachTemplate(step.wait.until, `${path}.wait.until`, (source, where) => check(source, where, scope(before, BASE_ROOTS, 'wait.until')));
    if (isObject(step.loop)) forEachTemplate(step.loop.in, `${path}.loop.in`, (source, where) => check(source, where, scope(before, BASE_ROOTS, 'loop.in')));
    const next = step.next;
    const arcs = Array.isArray(next) ? next.map((a, n) => [a, `${path}.next[${n}]`] as const) : isObject(next) && Array.isArray(next.arcs) ? next.arcs.map((a, n) => [a, `${path}.next.arcs[${n}]`] as const) : [];
    // An arc is evaluated when its step has run.
    const ran = (step: string) => step === name || before(step);
    for (const [arc, arcPath] of arcs) {
      if (!isObject(arc)) continue;
      // Arcs are evaluated on the server, once per step run: no keychain, tasks or loop item.
      if (typeof arc.when === 'string') check(conditionSource(arc.when), `${arcPath}.when`, scope(ran, ARC_ROOTS, "an arc's when", undefined, arcFields));
      forEachTemplate(arc.set, `${arcPath}.set`, (source, where) => check(source, where, scope(ran, ARC_ROOTS, "an arc's set", undefined, arcFields)));
    }
  });
  // A keychain entry is rendered by the worker over the context of the command that uses it (any
  // step's: a loop's item too), without the keychain (src/worker/keychain-resolver.ts).
  const iterators = steps.flatMap((s) => (isObject(s.loop) ? [typeof s.loop.iterator === 'string' ? s.loop.iterator : 'item'] : []));
  const keychainRoots = [...BASE_ROOTS, 'tasks', ...(iterators.length > 0 ? ['loop', ...iterators] : [])];
  (Array.isArray(document.keychain) ? document.keychain : []).forEach((entry, i) => {
    if (!isObject(entry)) return;
    const scope: Scope = { names: new Set([...keychainRoots, ...TEMPLATE_FUNCTIONS]), ran: () => true, step: null, field: null, reads: `a keychain entry reads ${keychainRoots.join(', ')}`, fields: { loop: LOOP } };
    for (const [key, value] of Object.entries(entry)) forEachTemplate(value, `keychain[${i}].${key}`, (source, where) => check(source, where, scope));
  });
  for (const field of ['concurrency', 'debounce'] as const) {
    const spec = document[field];
    if (!isObject(spec)) continue;
    const scope: Scope = { names: new Set([...START_ROOTS, ...TEMPLATE_FUNCTIONS]), ran: () => false, step: null, field: `${field}.key` };
    forEachTemplate(spec.key, `${field}.key`, (source, where) => check(source, where, scope));
  }
  return { problems, warnings };

  /**
   * Why `root.key` (or `steps.<key>.<field>`) is never there, for the roots whose fields the engine
   * fixes; undefined when it may be (a step that does not exist is said of `steps.<key>` itself).
   */
  function fieldMissing(root: string, key: string, field: string | undefined, scope: Scope): string | undefined {
    if (field !== undefined) return root === 'steps' && names.includes(key) ? notAField(STEP_OUTCOME, field) : undefined;
    const fields = root === 'outcome' || root === 'signal' || root === 'loop' ? scope.fields?.[root] : undefined;
    if (fields === 'none') return `step '${scope.step}' waits for no signal (signal is none in its arcs)`;
    return fields && notAField(fields, key);
  }

  /** Why a guarded read can be defined at no run, or undefined: it may be (a start's payload, a step that may have run). */
  function neverDefined(text: string, root: string | undefined, key: string | undefined, field: string | undefined, scope: Scope): string | undefined {
    if (root === undefined) return KNOWN_NAMES.has(text) ? (scope.field ? `${scope.field} reads ${START_ROOTS.join(' and ')}` : scope.reads) : `no root or variable is named '${text}'${didYouMean(text, [...scope.names])}`;
    if (key === undefined) return undefined;
    const unknownField = fieldMissing(root, key, field, scope);
    if (field !== undefined || unknownField) return unknownField;
    if (root === 'steps' && !names.includes(key)) return `there is no step '${key}'${didYouMean(key, names)}`;
    if (root === 'vars' && !varKeys.has(key)) return `no arc sets '${key}'`;
    if (root === 'tasks' && scope.tasks && !scope.tasks.includes(key)) return `no task '${key}' runs before this one in step '${scope.step}'`;
    if (root === 'execution' && !(EXECUTION_FIELDS as readonly string[]).includes(key)) return `execution has ${EXECUTION_FIELDS.join(', ')}`;
    return undefined;
  }
}

/**
 * The names a template reads, unguarded, that neither `roots` (what the place renders it over)
 * nor the functions define, and that the template does not bind itself: each undefined when it
 * renders. A template that does not parse has none (its syntax is another problem).
 */
export function undefinedNames(source: string, roots: readonly string[]): string[] {
  return undefinedReads(source, new Set([...roots, ...TEMPLATE_FUNCTIONS])).flatMap((r) => (r.expr.name === undefined && !r.guarded ? [r.text] : []));
}

/**
 * The unguarded reads `root.key` (a literal first key) of `roots` in a template that parses, as
 * `roots.key` or `roots['key']`: what a trigger's payload reads of `trigger`, `request`, `message`.
 */
export function memberReads(source: string, roots: readonly string[]): { root: string; key: string; text: string }[] {
  return undefinedReads(source, new Set([...roots, ...TEMPLATE_FUNCTIONS])).flatMap(({ expr, text, guarded }) =>
    !guarded && expr.name !== undefined && expr.key !== undefined && roots.includes(expr.name) ? [{ root: expr.name, key: expr.key, text }] : [],
  );
}

/**
 * Whether an arc path leads from one step to another (`from` may have run before `to` starts).
 * The steps each step leads to are found once per step asked about, when asked: a playbook of
 * thousands of steps costs a walk per step its templates read, not one per pair of steps.
 */
function arcPaths(steps: readonly Record<string, unknown>[], names: readonly string[]): (from: string, to: string) => boolean {
  const targets = new Map<string, string[]>();
  steps.forEach((step, j) => targets.set(names[j], [...(targets.get(names[j]) ?? []), ...arcTargets(step.next)]));
  const reached = new Map<string, Set<string>>();
  return (from, to) => {
    let found = reached.get(from);
    if (!found) {
      found = new Set();
      const pending = [...(targets.get(from) ?? [])];
      while (pending.length > 0) {
        const step = pending.pop() ?? '';
        if (found.has(step)) continue;
        found.add(step);
        for (const next of targets.get(step) ?? []) if (!found.has(next)) pending.push(next);
      }
      reached.set(from, found);
    }
    return found.has(to);
  };
}

/** The arcs of every form of `next` (a bare step name is no arc and sets nothing). */
function arcsOf(next: unknown): unknown[] {
  if (Array.isArray(next)) return next;
  return isObject(next) && Array.isArray(next.arcs) ? next.arcs : [];
}

function arcTargets(next: unknown): string[] {
  const target = (arc: unknown): string[] => (typeof arc === 'string' ? [arc] : isObject(arc) && typeof arc.step === 'string' ? [arc.step] : []);
  if (Array.isArray(next)) return next.flatMap(target);
  if (isObject(next) && Array.isArray(next.arcs)) return next.arcs.flatMap(target);
  return target(next);
}

function forEachTemplate(value: unknown, path: string, visit: (source: string, path: string) => void): void {
  if (typeof value === 'string') {
    if (TEMPLATE_MARK.test(value)) visit(value, path);
  } else if (Array.isArray(value)) value.forEach((item, i) => forEachTemplate(item, `${path}[${i}]`, visit));
  else if (isObject(value)) for (const [key, item] of Object.entries(value)) forEachTemplate(item, /^[A-Za-z_][A-Za-z0-9_]*$/.test(key) ? `${path}.${key}` : `${path}[${JSON.stringify(key)}]`, visit);
}

/** `guarded`: under `| default` or `is defined`, which makes an undefined value no error; `field`: of `steps.<key>.<field>`. */
type Read = { expr: { name: string | undefined; key: string | undefined; field?: string }; text: string; guarded: boolean };

/** `key` is none of `f`'s fields: what they are, with the one meant. */
function notAField(f: Fields, key: string): string | undefined {
  const said = f.fields.slice(0, f.said);
  return f.fields.includes(key) ? undefined : `${f.name} has ${said.join(', ')}${didYouMean(key, said)}`;
}

/**
 * The expressions a condition shows defined when it is `holds` (true or false): `x is defined`
 * (and both sides of `and`) when true, `x is undefined` and `not (x is defined)` when false.
 */
function definedWhen(cond: Expr, holds: boolean): string[] {
  if (cond.type === 'test' && (cond.name === 'defined') === holds && (cond.name === 'defined' || cond.name === 'undefined')) return [expressionText(cond.target)];
  if (cond.type === 'not') return definedWhen(cond.operand, !holds);
  if (cond.type === 'and' && holds) return [...definedWhen(cond.left, true), ...definedWhen(cond.right, true)];
  if (cond.type === 'or' && !holds) return [...definedWhen(cond.left, false), ...definedWhen(cond.right, false)];
  return [];
}

/** Roots whose first literal key is checked: the keys each may hold are known when the playbook is registered. */
const CHECKED_MEMBERS: ReadonlySet<string> = new Set(['workload', 'steps', 'tasks', 'execution', 'vars', 'trigger', 'request', 'message', 'outcome', 'signal', 'loop']);

/**
 * Reads of a template that may be undefined: a root with its first literal key (`workload.x`,
 * `steps.a`), and names the template nowhere defines (name undefined); `guarded` under `| default`
 * or `is defined`.
 * A template that does not parse has none here (templateProblems reports it).
 */
function undefinedReads(source: string, defined: ReadonlySet<string>): Read[] {
  let body: Stmt[];
  try {
    body = parseTemplate(source).body;
  } catch {
    return [];
  }
  // What the template binds itself (set, for, macro): `workload` bound there is not the root.
  const local = new Set<string>();
  collectLocals(body, local);
  const reads: Read[] = [];
  // What an enclosing condition tested `is defined` (`{% if x.y is defined %}`, `a if x.y is defined
  // else b`, `x.y is defined and x.y > 1`): read where that condition holds, it is there.
  const known: string[] = [];
  const withKnown = (texts: readonly string[], walk: () => void): void => {
    known.push(...texts);
    walk();
    known.length -= texts.length;
  };
  const expr = (e: Expr, guarded: boolean): void => {
    switch (e.type) {
      case 'name':
        if (!defined.has(e.name) && !local.has(e.name) && !known.includes(e.name)) reads.push({ expr: { name: undefined, key: undefined }, text: e.name, guarded });
        return;
      case 'conditional':
        expr(e.cond, false);
        withKnown(definedWhen(e.cond, true), () => expr(e.then, guarded));
        if (e.otherwise) withKnown(definedWhen(e.cond, false), () => expr(e.otherwise!, guarded));
        return;
      case 'and':
        expr(e.left, guarded);
        withKnown(definedWhen(e.left, true), () => expr(e.right, guarded));
        return;
      case 'or':
        // The right side is read only where the left is false (`x is undefined or x > 1`).
        expr(e.left, guarded);
        withKnown(definedWhen(e.left, false), () => expr(e.right, guarded));
        return;
      case 'get': {
        const key = e.key.type === 'literal' && typeof e.key.value === 'string' ? e.key.value : undefined;
        if (!known.includes(expressionText(e)) && e.target.type === 'name' && CHECKED_MEMBERS.has(e.target.name) && defined.has(e.target.name) && !local.has(e.target.name) && key !== undefined) {
          reads.push({ expr: { name: e.target.name, key }, text: expressionText(e), guarded });
        }
        // A step's outcome has fixed fields: `steps.<name>.<field>`.
        const inner = e.target;
        const step = inner.type === 'get' && inner.key.type === 'literal' && typeof inner.key.value === 'string' ? inner.key.value : undefined;
        if (step !== undefined && key !== undefined && inner.type === 'get' && inner.target.type === 'name' && inner.target.name === 'steps' && defined.has('steps') && !local.has('steps') && !known.includes(expressionText(e))) {
          reads.push({ expr: { name: 'steps', key: step, field: key }, text: expressionText(e), guarded });
        }
        expr(e.target, guarded);
        expr(e.key, false);
        return;
      }
      case 'slice':
        // A slice of a guarded operand is guarded, as at render time (`x[:3] | default('')`).
        expr(e.target, guarded);
        for (const bound of [e.start, e.stop, e.step]) if (bound) expr(bound, false);
        return;
      case 'filter':
        expr(e.target, guarded || e.name === 'default' || e.name === 'd');
        for (const a of e.args.positional) expr(a, false);
        for (const [, a] of e.args.keywords) expr(a, false);
        return;
      case 'test':
        expr(e.target, guarded || e.name === 'defined' || e.name === 'undefined');
        for (const a of e.args) expr(a, false);
        return;
      default:
        for (const child of childrenOf(e)) expr(child, false);
        if (e.type === 'block') stmts(e.body);
        if (e.type === 'call' && e.caller) stmts(e.caller.body);
    }
  };
  const stmts = (list: readonly Stmt[]): void => {
    for (const s of list) {
      if (s.type === 'output') expr(s.expr, false);
      else if (s.type === 'if') {
        expr(s.cond, false);
        withKnown(definedWhen(s.cond, true), () => stmts(s.then));
        withKnown(definedWhen(s.cond, false), () => stmts(s.otherwise));
      } else if (s.type === 'for') {
        expr(s.iterable, false);
        if (s.filter) expr(s.filter, false);
        stmts(s.body);
        stmts(s.otherwise);
      } else if (s.type === 'set') expr(s.value, false);
      else if (s.type === 'macro') {
        for (const p of s.macro.params) if (p.fallback) expr(p.fallback, false);
        stmts(s.macro.body);
      }
    }
  };
  stmts(body);
  return reads;
}

/** Every name a template binds anywhere (set, for, macro and its parameters): scope is not tracked. */
function collectLocals(list: readonly Stmt[], into: Set<string>): void {
  for (const s of list) {
    if (s.type === 'output') collectBlockLocals(s.expr, into);
    else if (s.type === 'set') {
      for (const t of s.targets) into.add(t.name);
      collectBlockLocals(s.value, into);
    } else if (s.type === 'for') {
      for (const n of s.names) into.add(n);
      into.add('loop');
      collectLocals(s.body, into);
      collectLocals(s.otherwise, into);
    } else if (s.type === 'if') {
      collectLocals(s.then, into);
      collectLocals(s.otherwise, into);
    } else if (s.type === 'macro') {
      into.add(s.macro.name);
      for (const p of s.macro.params) into.add(p.name);
      collectLocals(s.macro.body, into);
    }
  }
}

/**
 * What the blocks an expression holds bind: a `{% filter %}` or `{% set x %}` block's body, a
 * `{% call(user) m() %}` block's caller parameters and body (`{{ user }}` there was refused).
 */
function collectBlockLocals(e: Expr, into: Set<string>): void {
  if (e.type === 'block') collectLocals(e.body, into);
  if (e.type === 'call' && e.caller) {
    for (const p of e.caller.params) into.add(p.name);
    collectLocals(e.caller.body, into);
  }
  const inner = e.type === 'filter' || e.type === 'test' || e.type === 'get' || e.type === 'slice' ? [e.target] : childrenOf(e);
  for (const child of inner) collectBlockLocals(child, into);
}

function childrenOf(e: Expr): Expr[] {
  switch (e.type) {
    case 'list':
      return e.items;
    case 'dict':
      return e.pairs.map(([, v]) => v);
    case 'call':
    case 'method': {
      const args = [...e.args.positional, ...e.args.keywords.map(([, a]) => a)];
      return e.type === 'method' ? [e.target, ...args] : args;
    }
    case 'not':
    case 'negate':
    case 'plus':
      return [e.operand];
    case 'and':
    case 'or':
    case 'binary':
    case 'in':
      return [e.left, e.right];
    case 'compare':
      return [e.first, ...e.rest.map((r) => r.operand)];
    case 'conditional':
      return e.otherwise ? [e.cond, e.then, e.otherwise] : [e.cond, e.then];
    default:
      return [];
  }
}
