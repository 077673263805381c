import { expressionText, type Args, type Expr, type MacroDef, type SetTarget, type Stmt, type Template } from './template-ast.ts';
import { applyFilter, type CallArgs } from './template-filters.ts';
import { callGlobal } from './template-globals.ts';
import { callMethod } from './template-methods.ts';
import { applyTest } from './template-tests.ts';
import {
  assertAccessible,
  hasAttribute,
  contains,
  iterate,
  limitText,
  mappingOf,
  MAX_RENDERED_CHARS,
  Namespace,
  numeric,
  readAttribute,
  RenderFault,
  toText,
  truthy,
  typeName,
  type RenderBudget,
} from './template-values.ts';
import { isPlainObject } from '../objects.ts';
import { binary, compared, sliceIndex, sliceOf } from './template-operators.ts';
import { unresolvedReason } from './unresolved-keychain-entry.ts';

// Evaluates a parsed template (template-ast.ts) over plain data. This is the whole of what a
// template can do: every value it reads comes from the context through readAttribute (own data
// only), every call goes to a filter, test, method or global of ours, or to one of its own
// macros; no JavaScript is generated and no JavaScript function of a value is ever reached.

/** What one render reads: the context, its budget, and the keychain for the strict lookups. */
export type RenderScope = {
  ctx: Record<string, unknown>;
  budget: RenderBudget;
  keychain: object | undefined;
  /** keychain entry object → entry name, so a missing field can be named. */
  keychainEntries: Map<object, string>;
};

/** Deepest macro calls may nest (recursion is allowed, within this and the step budget). */
export const MAX_MACRO_DEPTH = 64;

class Frame {
  vars: Map<string, unknown> | undefined = undefined;
  readonly parent: Frame | undefined;
  constructor(parent: Frame | undefined) {
    this.parent = parent;
  }
  set(name: string, value: unknown): void {
    (this.vars ??= new Map()).set(name, value);
  }
}

/** A macro with the scope it was defined in; only ever held by frames, never a value. */
class MacroClosure {
  readonly def: MacroDef;
  readonly frame: Frame;
  constructor(def: MacroDef, frame: Frame) {
    this.def = def;
    this.frame = frame;
  }
}

const MISSING = Symbol('missing');

/** Filters and tests whose operand may be absent (Jinja: `default`/`d`, `defined`/`undefined`). */
const DEFAULT_FILTERS: ReadonlySet<string> = new Set(['default', 'd']);
const DEFINED_TESTS: ReadonlySet<string> = new Set(['defined', 'undefined']);

/**
 * How a template's own text and its outputs make the text of a language (a shell command, SQL):
 * `literal` reads the template's text, in order, to know where the next output lands; `output`
 * returns what stands there for an output's value, which the language reads as data, never as
 * syntax (or throws RenderFault). `wordsAlready`: an output `{{ x | quote }}` gives `x` itself
 * (the escaper makes every output one word already).
 */
export type OutputEscaper = { literal(text: string): void; output(value: unknown): string; readonly wordsAlready: boolean };

/**
 * Evaluates `template`: its text, or for a lone `{{ expr }}` the expression's value. With
 * `escaper`, always its text, each output of its own text written through the escaper (what
 * macros, `{% set %}` and `{% filter %}` blocks make is a value, escaped where it is output).
 * Throws RenderFault.
 */
export function interpretTemplate(template: Template, scope: RenderScope, escaper?: OutputEscaper): unknown {
  const run = new Interpreter(scope);
  const top = new Frame(undefined);
  if (escaper) return run.body(template.body, top, escaper);
  return template.native ? run.expr(template.native, top) : run.body(template.body, top);
}

class Interpreter {
  private readonly scope: RenderScope;
  private depth = 0;
  constructor(scope: RenderScope) {
    this.scope = scope;
  }

  body(stmts: readonly Stmt[], frame: Frame, escaper?: OutputEscaper): string {
    let out = '';
    for (const stmt of stmts) {
      this.scope.budget.spend(1);
      switch (stmt.type) {
        case 'text':
          escaper?.literal(stmt.text);
          out += stmt.text;
          break;
        case 'output': {
          const e = stmt.expr;
          if (!escaper) out += toText(this.expr(e, frame));
          else if (escaper.wordsAlready && e.type === 'filter' && e.name === 'quote' && !e.args.positional.length && !e.args.keywords.length) out += escaper.output(this.expr(e.target, frame));
          else out += escaper.output(this.expr(e, frame));
          break;
        }
        case 'if':
          out += this.body(truthy(this.expr(stmt.cond, frame)) ? stmt.then : stmt.otherwise, frame, escaper);
          break;
        case 'for':
          out += this.loop(stmt, frame, escaper);
          break;
        case 'set':
          this.set(stmt.targets, stmt.value, frame);
          break;
        case 'macro':
          frame.set(stmt.macro.name, new MacroClosure(stmt.macro, frame));
          break;
      }
      if (out.length > MAX_RENDERED_CHARS) limitText(out);
    }
    return out;
  }

  private loop(stmt: Extract<Stmt, { type: 'for' }>, frame: Frame, escaper?: OutputEscaper): string {
    const iterable = this.expr(stmt.iterable, frame);
    const { names } = stmt;
    // `for k, v in mapping` walks its entries, as nunjucks did; one name walks the keys, as Jinja does.
    let items = names.length > 1 && isPlainObject(iterable) ? Object.entries(iterable) : iterate(iterable, 'for');
    const { filter } = stmt;
    if (filter) items = items.filter((item) => truthy(this.expr(filter, this.bind(names, item, frame))));
    if (items.length === 0) return this.body(stmt.otherwise, frame, escaper);
    let out = '';
    const length = items.length;
    for (let i = 0; i < length; i++) {
      const local = this.bind(names, items[i], frame);
      const info: Record<string, unknown> = { index: i + 1, index0: i, revindex: length - i, revindex0: length - i - 1, first: i === 0, last: i === length - 1, length };
      if (i > 0) info.previtem = items[i - 1];
      if (i < length - 1) info.nextitem = items[i + 1];
      local.set('loop', info);
      out = limitText(out + this.body(stmt.body, local, escaper));
    }
    return out;
  }

  /** A frame for one loop item, bound to the loop's names (unpacked when there are several). */
  private bind(names: readonly string[], item: unknown, frame: Frame): Frame {
    const local = new Frame(frame);
    if (names.length === 1) local.set(names[0], item);
    else {
      if (!Array.isArray(item) || item.length !== names.length) throw new RenderFault(`for: an item does not unpack into ${names.length} names`);
      names.forEach((name, j) => local.set(name, item[j]));
    }
    return local;
  }

  private set(targets: readonly SetTarget[], valueNode: Expr, frame: Frame): void {
    if (valueNode.type === 'call' && valueNode.name === 'namespace' && this.frameValue('namespace', frame) === MISSING) {
      if (targets.length !== 1 || targets[0].attribute !== undefined) throw new RenderFault('namespace() can only be assigned to one name');
      frame.set(targets[0].name, this.namespace(valueNode.args, frame));
      return;
    }
    const value = this.expr(valueNode, frame);
    if (targets.length === 1) return this.assign(targets[0], value, frame);
    if (!Array.isArray(value) || value.length !== targets.length) throw new RenderFault(`set: the value does not unpack into ${targets.length} names`);
    targets.forEach((target, i) => this.assign(target, value[i], frame));
  }

  private assign(target: SetTarget, value: unknown, frame: Frame): void {
    if (target.attribute === undefined) return frame.set(target.name, value);
    const ns = this.lookup(target.name, frame);
    if (!(ns instanceof Namespace)) throw new RenderFault(`'${target.name}' is not a namespace(): only a namespace takes attributes`);
    assertAccessible(target.attribute);
    ns.values.set(target.attribute, value);
  }

  private namespace(args: Args, frame: Frame): Namespace {
    const { positional, keywords } = this.args(args, frame);
    if (positional.length > 1 || (positional.length === 1 && !isPlainObject(positional[0]))) throw new RenderFault('namespace takes at most one mapping');
    const ns = new Namespace();
    for (const [key, value] of [...Object.entries(positional[0] ?? {}), ...(keywords ?? [])]) ns.values.set(key, value);
    return ns;
  }

  expr(e: Expr, frame: Frame): unknown {
    const budget = this.scope.budget;
    budget.spend(1);
    switch (e.type) {
      case 'literal':
        return e.value;
      case 'name': {
        const value = this.resolve(e.name, frame);
        if (value === MISSING) throw new RenderFault(`'${e.name}' is undefined`);
        if (value instanceof MacroClosure) throw new RenderFault(`macro '${e.name}' can only be called`);
        if (value instanceof Namespace) throw new RenderFault(`namespace '${e.name}' can only be used as ${e.name}.<attribute>`);
        return value;
      }
      case 'get':
        return this.get(e, frame);
      case 'slice':
        return this.slice(e, this.expr(e.target, frame), frame);
      case 'list':
        return e.items.map((item) => this.expr(item, frame));
      case 'dict':
        return mappingOf(e.pairs.map(([key, value]) => [key, this.expr(value, frame)] as const));
      case 'call':
        return this.call(e, frame);
      case 'method':
        return callMethod(this.expr(e.target, frame), e.name, this.args(e.args, frame), budget);
      case 'filter':
        if (e.name === 'attr') return this.attr(e, frame, false);
        // `| default(...)` is how a template says a value may be absent: its operand reads leniently.
        return applyFilter(e.name, DEFAULT_FILTERS.has(e.name) ? this.guarded(e.target, frame) : this.expr(e.target, frame), this.args(e.args, frame), budget);
      case 'block':
        return this.body(e.body, frame);
      case 'test':
        return applyTest(e.name, DEFINED_TESTS.has(e.name) ? this.guarded(e.target, frame) : this.expr(e.target, frame), e.args.map((arg) => this.expr(arg, frame)), budget);
      case 'not':
        return !truthy(this.expr(e.operand, frame));
      case 'negate':
      case 'plus': {
        const n = numeric(this.expr(e.operand, frame));
        if (n === undefined) throw new RenderFault(`unary ${e.type === 'negate' ? '-' : '+'} needs a number`);
        return e.type === 'negate' ? -n : n;
      }
      case 'and': {
        const left = this.expr(e.left, frame);
        return truthy(left) ? this.expr(e.right, frame) : left;
      }
      case 'or': {
        const left = this.expr(e.left, frame);
        return truthy(left) ? left : this.expr(e.right, frame);
      }
      case 'binary':
        return binary(e.op, this.expr(e.left, frame), this.expr(e.right, frame), budget);
      case 'in':
        return contains(this.expr(e.right, frame), this.expr(e.left, frame), budget);
      case 'compare': {
        let left = this.expr(e.first, frame);
        for (const { op, operand } of e.rest) {
          const right = this.expr(operand, frame);
          if (!compared(op, left, right, budget)) return false;
          left = right;
        }
        return true;
      }
      case 'conditional':
        if (truthy(this.expr(e.cond, frame))) return this.expr(e.then, frame);
        return e.otherwise ? this.expr(e.otherwise, frame) : undefined;
    }
  }

  /** `e` where a missing name or attribute (anywhere along a chain `a.b.c`) is undefined, not an error. */
  private guarded(e: Expr, frame: Frame): unknown {
    if (e.type === 'name') {
      const value = this.resolve(e.name, frame);
      return value === MISSING ? undefined : this.expr(e, frame);
    }
    if (e.type === 'slice') {
      const target = this.guarded(e.target, frame);
      return target === undefined ? undefined : this.slice(e, target, frame);
    }
    if (e.type === 'filter' && e.name === 'attr') return this.attr(e, frame, true);
    return e.type === 'get' ? this.get(e, frame, true) : this.expr(e, frame);
  }

  /** `target | attr(name)`: reads as `target[name]` does, strict unless `guarded`. */
  private attr(e: Extract<Expr, { type: 'filter' }>, frame: Frame, guarded: boolean): unknown {
    const target = guarded ? this.guarded(e.target, frame) : this.expr(e.target, frame);
    const args = this.args(e.args, frame);
    const value = applyFilter('attr', target, args, this.scope.budget);
    const name = args.positional[0] ?? args.keywords?.get('name');
    if (value !== undefined || guarded || hasAttribute(target, name)) return value;
    const shown = typeof name === 'string' ? `'${name}'` : String(name);
    const what = target === null ? 'is none' : target === undefined ? 'is undefined' : `has no attribute ${shown}`;
    throw new RenderFault(`'${expressionText(e.target)} | attr(${shown})' is undefined: '${expressionText(e.target)}' ${what}`);
  }

  /** `target[start:stop:step]` of the evaluated target of `e`; the bounds are evaluated here. */
  private slice(e: Extract<Expr, { type: 'slice' }>, target: unknown, frame: Frame): string | unknown[] {
    if (typeof target !== 'string' && !Array.isArray(target)) throw new RenderFault(`cannot slice ${typeName(target)} ('${expressionText(e.target)}'): only a string or a list can be sliced`);
    const bound = (b: Expr | undefined): number | undefined => (b === undefined ? undefined : sliceIndex(this.expr(b, frame)));
    return sliceOf(target, bound(e.start), bound(e.stop), bound(e.step), this.scope.budget);
  }

  // Strict, as Jinja's StrictUndefined: reading what is not there is an error naming the
  // expression, unless `guarded` (the operand of `default` or `is defined`).
  private get(e: Extract<Expr, { type: 'get' }>, frame: Frame, guarded = false): unknown {
    // A forbidden name is refused as such, whatever it is read from (`range.constructor`).
    if (e.key.type === 'literal' && typeof e.key.value === 'string') assertAccessible(e.key.value);
    let target: unknown;
    if (e.target.type === 'name') {
      // A namespace or macro is reachable by name only, so it is looked up here rather than as a value.
      target = this.resolve(e.target.name, frame);
      if (target === MISSING) {
        if (guarded) return undefined;
        throw new RenderFault(`'${e.target.name}' is undefined`);
      }
      if (target instanceof MacroClosure) throw new RenderFault(`macro '${e.target.name}' has no attributes`);
    } else {
      target = guarded ? this.guarded(e.target, frame) : this.expr(e.target, frame);
    }
    const key = this.expr(e.key, frame);
    if (typeof key === 'string') assertAccessible(key);
    if (target instanceof Namespace) {
      if (typeof key !== 'string') throw new RenderFault('a namespace attribute name must be a string');
      if (!target.values.has(key) && !guarded) throw new RenderFault(`'${expressionText(e)}' is undefined: namespace '${expressionText(e.target)}' has no attribute '${key}'`);
      return target.values.get(key);
    }
    if (target === undefined) {
      if (guarded) return undefined;
      const literal = e.key.type === 'literal' && typeof e.key.value === 'string' ? `'${e.key.value}'` : 'an attribute';
      throw new RenderFault(`cannot read ${literal} of an undefined value ('${expressionText(e)}')`);
    }
    if (typeof key === 'string') this.checkKeychain(target, key);
    if (!guarded && !hasAttribute(target, key)) {
      const what = target === null ? 'is none' : `has no ${typeof key === 'number' || Array.isArray(target) ? 'item' : 'attribute'} ${typeof key === 'string' ? `'${key}'` : String(key)}`;
      throw new RenderFault(`'${expressionText(e)}' is undefined: '${expressionText(e.target)}' ${what}`);
    }
    return readAttribute(target, key);
  }

  // A keychain entry or field that is missing is an error, not an empty value: the worker could
  // not resolve it, and sending a request without its token would hide that.
  private checkKeychain(target: unknown, key: string): void {
    const { keychain, keychainEntries } = this.scope;
    if (keychain === undefined || target === null || typeof target !== 'object') return;
    if (target === keychain && (!Object.hasOwn(target, key) || Reflect.get(target, key) == null)) {
      throw new RenderFault(`keychain entry '${key}' is not available`);
    }
    const entry = keychainEntries.get(target);
    if (entry === undefined || Object.hasOwn(target, key)) return;
    const reason = unresolvedReason(target);
    throw new RenderFault(`keychain entry '${entry}' has no field '${key}'${reason === undefined ? '' : ` (${reason})`}`);
  }

  private call(e: Extract<Expr, { type: 'call' }>, frame: Frame): unknown {
    const callee = this.frameValue(e.name, frame);
    if (callee instanceof MacroClosure) return this.callMacro(callee, e, frame);
    if (callee !== MISSING) throw new RenderFault(`'${e.name}' is not callable`);
    if (e.name === 'namespace') throw new RenderFault('namespace() can only be assigned: {% set ns = namespace() %}');
    if (e.caller) throw new RenderFault(`{% call %} needs a macro, '${e.name}' is not one`);
    const result = callGlobal(e.name, this.args(e.args, frame), this.scope.budget);
    if (!result) throw new RenderFault(`unknown function '${e.name}'`);
    return result.value;
  }

  private callMacro(closure: MacroClosure, e: Extract<Expr, { type: 'call' }>, frame: Frame): string {
    const { def } = closure;
    if (this.depth >= MAX_MACRO_DEPTH) throw new RenderFault(`macro calls nested more than ${MAX_MACRO_DEPTH} deep`);
    const { positional, keywords } = this.args(e.args, frame);
    if (positional.length > def.params.length) throw new RenderFault(`macro '${def.name}' takes at most ${def.params.length} arguments`);
    const local = new Frame(closure.frame);
    const given = new Map<string, unknown>();
    positional.forEach((value, i) => given.set(def.params[i].name, value));
    for (const [name, value] of keywords ?? []) {
      if (!def.params.some((p) => p.name === name)) throw new RenderFault(`macro '${def.name}' has no argument '${name}'`);
      given.set(name, value);
    }
    if (e.caller) local.set('caller', new MacroClosure(e.caller, frame));
    for (const param of def.params) {
      local.set(param.name, given.has(param.name) ? given.get(param.name) : param.fallback ? this.expr(param.fallback, local) : undefined);
    }
    this.depth++;
    try {
      return this.body(def.body, local);
    } finally {
      this.depth--;
    }
  }

  private args(args: Args, frame: Frame): CallArgs {
    return {
      positional: args.positional.map((arg) => this.expr(arg, frame)),
      keywords: args.keywords.length === 0 ? undefined : new Map(args.keywords.map(([name, arg]) => [name, this.expr(arg, frame)])),
    };
  }

  /** A name's value: the innermost frame holding it, else the context's own property. */
  private lookup(name: string, frame: Frame): unknown {
    const value = this.resolve(name, frame);
    return value === MISSING ? undefined : value;
  }

  /** As lookup, but MISSING when no frame and not the context holds the name. */
  private resolve(name: string, frame: Frame): unknown {
    const value = this.frameValue(name, frame);
    if (value !== MISSING) return value;
    const ctx = this.scope.ctx;
    return Object.hasOwn(ctx, name) ? ctx[name] : MISSING;
  }

  private frameValue(name: string, frame: Frame): unknown {
    for (let f: Frame | undefined = frame; f; f = f.parent) {
      if (f.vars === undefined) continue;
      const value = f.vars.get(name);
      if (value !== undefined || f.vars.has(name)) return value;
    }
    return MISSING;
  }
}
