import nunjucks from 'nunjucks';
import { templateFilters } from './template-filters.ts';

// Jinja2-style rendering of playbook values (DESIGN.md "Playbook DSL v1"). Rendering is fully
// synchronous (no async filters, no loaders), which lets one module-level slot carry the state
// of the render in progress to the strict member lookup and to the native-value capture.

/** A template failed to compile or render; `field` names the value, e.g. `tool[0].url`. */
export class TemplateError extends Error {
  override readonly name = 'TemplateError';
  readonly field: string;
  readonly detail: string;
  constructor(field: string, detail: string) {
    super(`template error in ${field}: ${detail}`);
    this.field = field;
    this.detail = detail;
  }
}

type RenderState = {
  keychain: object | undefined;
  /** keychain entry object → entry name, so a missing field can be named. */
  keychainEntries: Map<object, string>;
  captured: unknown;
};

type Runtime = { memberLookup: (obj: unknown, key: unknown) => unknown };
type RootRenderFunc = (env: unknown, context: unknown, frame: unknown, runtime: Runtime, cb: unknown) => void;

const CAPTURE = '__capture';
const env = new nunjucks.Environment(null, { autoescape: false, throwOnUndefined: false });
for (const [name, filter] of Object.entries(templateFilters)) env.addFilter(name, filter);
env.addGlobal(CAPTURE, (value: unknown): string => {
  if (active) active.captured = value instanceof nunjucks.runtime.SafeString ? value.toString() : value;
  return '';
});

let active: RenderState | undefined;
const cache = new Map<string, nunjucks.Template>();
const CACHE_LIMIT = 2000;
const TEMPLATE_MARK = /\{\{|\{%|\{#/;
const SINGLE_EXPRESSION = /^\s*\{\{-?([\s\S]*?)-?\}\}\s*$/;

/**
 * Deep-renders every string in `value` (object keys are left alone); a string that is exactly one
 * `{{ expr }}` yields the expression's native value. Output is never rendered again.
 * Throws TemplateError naming `path` (extended with `.key` / `[i]`) on any template failure.
 */
export function renderValue(value: unknown, ctx: Record<string, unknown>, path: string): unknown {
  const state = newState(ctx);
  return walk(value, path, ctx, state);
}

/**
 * Evaluates an arc or retry `when` (`{{ ... }}` form or a bare expression) with Jinja truthiness.
 * Throws TemplateError naming `path` when the expression cannot be evaluated.
 */
export function evaluateCondition(expr: string, ctx: Record<string, unknown>, path = 'when'): boolean {
  const source = TEMPLATE_MARK.test(expr) ? expr : `{{ ${expr} }}`;
  return isTruthy(renderString(source, ctx, path, newState(ctx)));
}

/** Jinja truthiness, plus the strings "false"/"False" (what `{{ x }}` of a false boolean reads like) as false. */
export function isTruthy(value: unknown): boolean {
  if (value === undefined || value === null || value === false) return false;
  if (typeof value === 'number') return value !== 0 && !Number.isNaN(value);
  if (typeof value === 'string') {
    const text = value.trim();
    return text !== '' && text.toLowerCase() !== 'false';
  }
  if (Array.isArray(value)) return value.length > 0;
  if (value instanceof Map || value instanceof Set) return value.size > 0;
  if (isPlainObject(value)) return Object.keys(value).length > 0;
  return true;
}

function newState(ctx: Record<string, unknown>): RenderState {
  const keychain = ctx.keychain;
  const keychainEntries = new Map<object, string>();
  if (keychain === null || typeof keychain !== 'object') return { keychain: undefined, keychainEntries, captured: undefined };
  for (const [name, entry] of Object.entries(keychain)) {
    if (entry !== null && typeof entry === 'object') keychainEntries.set(entry, name);
  }
  return { keychain, keychainEntries, captured: undefined };
}

function walk(value: unknown, path: string, ctx: Record<string, unknown>, state: RenderState): unknown {
  if (typeof value === 'string') return renderString(value, ctx, path, state);
  if (Array.isArray(value)) return value.map((item, i) => walk(item, `${path}[${i}]`, ctx, state));
  if (isPlainObject(value)) {
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) out[key] = walk(item, childPath(path, key), ctx, state);
    return out;
  }
  return value;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object') return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

function childPath(path: string, key: string): string {
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(key)) return `${path}[${JSON.stringify(key)}]`;
  return path === '' ? key : `${path}.${key}`;
}

function renderString(text: string, ctx: Record<string, unknown>, path: string, state: RenderState): unknown {
  if (!TEMPLATE_MARK.test(text)) return text;
  const single = SINGLE_EXPRESSION.exec(text);
  const inner = single?.[1].trim();
  const native = inner !== undefined && inner !== '' && !/\{\{|\}\}|\{%|%\}|\{#|#\}/.test(inner);
  const source = native ? `{{ ${CAPTURE}(${inner}) }}` : text;
  const previous = active;
  active = state;
  state.captured = undefined;
  try {
    const rendered = compiled(source).render(ctx);
    return native ? state.captured : rendered;
  } catch (error) {
    throw new TemplateError(path, cleanMessage(error, !native));
  } finally {
    active = previous;
  }
}

function compiled(source: string): nunjucks.Template {
  const hit = cache.get(source);
  if (hit) return hit;
  const template = new nunjucks.Template(source, env, undefined, true);
  installStrictLookup(template);
  if (cache.size >= CACHE_LIMIT) cache.clear();
  cache.set(source, template);
  return template;
}

// nunjucks returns undefined for `a.b` when `a` is undefined and has no hook for it, so the
// compiled root function gets a runtime whose memberLookup is strict (Jinja raises there too).
// The template's private rootRenderFunc is the only seam; fail loudly if it ever disappears.
function installStrictLookup(template: object): void {
  if (!hasRootRenderFunc(template)) throw new Error('nunjucks internals changed: Template.rootRenderFunc is missing');
  const root = template.rootRenderFunc;
  template.rootRenderFunc = (environment, context, frame, runtime, cb) => {
    root(environment, context, frame, strictRuntime(runtime), cb);
  };
}

const strictRuntimes = new WeakMap<Runtime, Runtime>();

function strictRuntime(runtime: Runtime): Runtime {
  const cached = strictRuntimes.get(runtime);
  if (cached) return cached;
  // Inherits every other runtime helper the compiled code calls.
  const strict: Runtime = Object.assign(Object.create(runtime), {
    memberLookup: (obj: unknown, key: unknown) => strictLookup(runtime, obj, key),
  });
  strictRuntimes.set(runtime, strict);
  return strict;
}

function hasRootRenderFunc(template: object): template is { rootRenderFunc: RootRenderFunc } {
  return 'rootRenderFunc' in template && typeof template.rootRenderFunc === 'function';
}

function strictLookup(runtime: Runtime, obj: unknown, key: unknown): unknown {
  // As in Jinja: an attribute of an undefined value is an error, an attribute of null (None) is
  // merely undefined, so `outcome.error.code` is falsy rather than fatal on a successful outcome.
  if (obj === undefined) throw new Error(`cannot read '${String(key)}' of an undefined value`);
  if (obj === null) return undefined;
  const state = active;
  if (state && typeof obj === 'object' && typeof key === 'string') {
    if (obj === state.keychain && (!Object.hasOwn(obj, key) || Reflect.get(obj, key) == null)) {
      throw new Error(`keychain entry '${key}' is not available`);
    }
    const entry = state.keychainEntries.get(obj);
    if (entry !== undefined && !Object.hasOwn(obj, key)) throw new Error(`keychain entry '${entry}' has no field '${key}'`);
  }
  return runtime.memberLookup(obj, key);
}

// nunjucks messages look like "(unknown path) [Line 1, Column 7]\n  Error: <what>"; keep <what>
// and, when the position refers to the author's text (not the capture wrapper), the position.
function cleanMessage(error: unknown, withPosition: boolean): string {
  const message = error instanceof Error ? error.message : String(error);
  const match = /^\(unknown path\)(?: \[Line (\d+), Column (\d+)\])?\s*([\s\S]*)$/.exec(message);
  if (!match) return message;
  const what = match[3].replace(/^[A-Za-z]*Error: /, '').trim();
  return withPosition && match[1] ? `${what} (line ${match[1]}, column ${match[2]})` : what;
}
