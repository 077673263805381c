import { TEMPLATE_MARK, TemplateSyntaxError } from './template-ast.ts';
import { parseTemplate } from './template-parser.ts';
import { interpretTemplate, type OutputEscaper, type RenderScope } from './template-interpreter.ts';
import { ShellOutputs } from './shell-outputs.ts';
import { SqlLiterals } from './sql-literals.ts';
import { RenderBudget, RenderFault, setOwn } from './template-values.ts';
import { isPlainObject } from '../objects.ts';

// Jinja2-style rendering of playbook values (DESIGN.md "Playbook DSL v1"). nunjucks only parses
// (template-parser.ts); template-interpreter.ts evaluates the tree over plain data, so a template
// can read data and call our filters, and nothing else: no JavaScript is generated and no JS
// object is reachable.

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

/**
 * Deep-renders every string in `value` (object keys are left alone); a string that is exactly one
 * `{{ expr }}` yields the expression's native value. Output is never rendered again.
 * Throws TemplateError naming `path` (extended with `.key` / `[i]`) on any template failure,
 * including a render that exceeds its step budget or makes a string over the size limit.
 */
export function renderValue(value: unknown, ctx: Record<string, unknown>, path: string): unknown {
  return walk(value, path, newScope(ctx));
}

/**
 * Evaluates an arc or retry `when` (`{{ ... }}` form or a bare expression) with Jinja truthiness.
 * Throws TemplateError naming `path` when the expression cannot be evaluated.
 */
export function evaluateCondition(expr: string, ctx: Record<string, unknown>, path = 'when'): boolean {
  return isTruthy(renderString(conditionSource(expr), path, newScope(ctx)));
}

/** The template text of a `when`: as written when it has template syntax, else `{{ expr }}`. */
export function conditionSource(expr: string): string {
  return TEMPLATE_MARK.test(expr) ? expr : `{{ ${expr} }}`;
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

function newScope(ctx: Record<string, unknown>): RenderScope {
  const budget = new RenderBudget();
  const keychain = ctx.keychain;
  const keychainEntries = new Map<object, string>();
  if (keychain === null || typeof keychain !== 'object') return { ctx, budget, keychain: undefined, keychainEntries };
  for (const [name, entry] of Object.entries(keychain)) {
    if (entry !== null && typeof entry === 'object') keychainEntries.set(entry, name);
  }
  return { ctx, budget, keychain, keychainEntries };
}

function walk(value: unknown, path: string, scope: RenderScope): unknown {
  if (typeof value === 'string') return renderString(value, path, scope);
  if (Array.isArray(value)) return value.map((item, i) => walk(item, `${path}[${i}]`, scope));
  if (isPlainObject(value)) {
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) setOwn(out, key, walk(item, childPath(path, key), scope));
    return out;
  }
  return value;
}

/** `path.key`, or `path["key"]` when the key is not an identifier. */
export function childPath(path: string, key: string): string {
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(key)) return `${path}[${JSON.stringify(key)}]`;
  return path === '' ? key : `${path}.${key}`;
}

/**
 * Renders a shell task's `command`: its outputs stand in it as expansions of the variables `env`
 * holds (src/dsl/shell-outputs.ts), never as its text. Throws TemplateError.
 */
export function renderShellCommand(text: string, ctx: Record<string, unknown>, path: string): { command: string; env: Record<string, string> } {
  const outputs = new ShellOutputs();
  const command = String(renderString(text, path, newScope(ctx), outputs));
  return { command, env: outputs.variables };
}

/** Renders a postgres task's `command`: its outputs written as SQL literals (src/dsl/sql-literals.ts). Throws TemplateError. */
export function renderSqlCommand(text: string, ctx: Record<string, unknown>, path: string): string {
  return String(renderString(text, path, newScope(ctx), new SqlLiterals()));
}

/**
 * How deep a rendered value may nest: twice what a request's body may (64), and above a YAML
 * document's 100; far below what JSON.stringify's recursion overflows at when it is stored.
 */
export const MAX_RENDERED_DEPTH = 128;

/** Whether `value` nests more than `levels` lists or mappings deep; stops as soon as it does. */
function nestsDeeper(value: unknown, levels: number): boolean {
  if (!Array.isArray(value) && !isPlainObject(value)) return false;
  if (levels === 0) return true;
  for (const item of Array.isArray(value) ? value : Object.values(value)) if (nestsDeeper(item, levels - 1)) return true;
  return false;
}

function renderString(text: string, path: string, scope: RenderScope, escaper?: OutputEscaper): unknown {
  if (!TEMPLATE_MARK.test(text)) return text;
  try {
    const value = interpretTemplate(parseTemplate(text), scope, escaper);
    // `fromjson` of "[[[[…]]]]" made values whose write overflowed the stack (a 500 on the server).
    if (nestsDeeper(value, MAX_RENDERED_DEPTH)) throw new RenderFault(`the value nests more than ${MAX_RENDERED_DEPTH} levels`);
    return value;
  } catch (error) {
    if (error instanceof RenderFault || error instanceof TemplateSyntaxError) throw new TemplateError(path, error.message);
    // Deep macro recursion or nesting can still exhaust the stack before the budget does.
    if (error instanceof RangeError && /call stack/i.test(error.message)) throw new TemplateError(path, 'the template nests too deeply');
    throw new TemplateError(path, error instanceof Error ? error.message : String(error));
  }
}
