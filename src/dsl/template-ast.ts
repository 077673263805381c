// The tree of a parsed template: our own plain data, which template-interpreter.ts evaluates and
// the reference checks read. Only template-parser.ts builds it (from nunjucks' parser); nothing
// else in the service sees how templates are parsed.

export type BinaryOp = '+' | '-' | '*' | '/' | '//' | '%' | '**' | '~';
export type CompareOp = '==' | '!=' | '<' | '>' | '<=' | '>=';
export type Args = { positional: Expr[]; keywords: [string, Expr][] };

export type Expr =
  | { type: 'literal'; value: string | number | boolean | null }
  | { type: 'name'; name: string }
  | { type: 'get'; target: Expr; key: Expr }
  /** `target[start:stop:step]`, Python's slice of a string or list; an absent part is undefined. */
  | { type: 'slice'; target: Expr; start: Expr | undefined; stop: Expr | undefined; step: Expr | undefined }
  | { type: 'list'; items: Expr[] }
  | { type: 'dict'; pairs: [string, Expr][] }
  | { type: 'call'; name: string; args: Args; caller: MacroDef | undefined }
  | { type: 'method'; target: Expr; name: string; args: Args }
  | { type: 'filter'; name: string; target: Expr; args: Args }
  /** The text a block of statements renders: the body of `{% filter %}` and of `{% set x %}...{% endset %}`. */
  | { type: 'block'; body: Stmt[] }
  | { type: 'test'; name: string; target: Expr; args: Expr[] }
  | { type: 'not'; operand: Expr }
  | { type: 'negate' | 'plus'; operand: Expr }
  | { type: 'and' | 'or'; left: Expr; right: Expr }
  | { type: 'binary'; op: BinaryOp; left: Expr; right: Expr }
  | { type: 'in'; left: Expr; right: Expr }
  | { type: 'compare'; first: Expr; rest: { op: CompareOp; operand: Expr }[] }
  | { type: 'conditional'; cond: Expr; then: Expr; otherwise: Expr | undefined };

export type SetTarget = { name: string; attribute: string | undefined };

export type Stmt =
  | { type: 'text'; text: string }
  | { type: 'output'; expr: Expr }
  | { type: 'if'; cond: Expr; then: Stmt[]; otherwise: Stmt[] }
  /** `filter` is Jinja's `{% for x in items if cond %}`: only items where it holds are iterated. */
  | { type: 'for'; names: string[]; iterable: Expr; filter: Expr | undefined; body: Stmt[]; otherwise: Stmt[] }
  | { type: 'set'; targets: SetTarget[]; value: Expr }
  | { type: 'macro'; macro: MacroDef };

export type MacroDef = { name: string; params: { name: string; fallback: Expr | undefined }[]; body: Stmt[] };

/** A parsed template; `native` is its expression when the text is exactly one `{{ expr }}`. */
export type Template = { body: Stmt[]; native: Expr | undefined };

/** A template that cannot be parsed, or uses what templates may not; the message names no value. */
export class TemplateSyntaxError extends Error {
  override readonly name = 'TemplateSyntaxError';
  /** Where in the template (1-based line and column) the parser stopped, when it says. */
  readonly at: { line: number; column: number } | undefined;
  constructor(message: string, at?: { line: number; column: number }) {
    super(message);
    this.at = at;
  }
}

/** Strings that hold template syntax; any other string is plain text and never parsed. */
export const TEMPLATE_MARK = /\{\{|\{%|\{#/;

/**
 * The source-like text of an expression, for messages: `steps.a.result`, `x[0]`, `a['b c']`,
 * `x[1:-1]`; anything other than names, attributes and slices reads as `(…)`.
 */
export function expressionText(e: Expr): string {
  if (e.type === 'name') return e.name;
  if (e.type === 'slice') return `${expressionText(e.target)}[${[e.start, e.stop, ...(e.step ? [e.step] : [])].map(boundText).join(':')}]`;
  if (e.type !== 'get') return '(…)';
  const target = expressionText(e.target);
  const key = e.key;
  if (key.type === 'literal' && typeof key.value === 'string' && /^[A-Za-z_][A-Za-z0-9_]*$/.test(key.value)) return `${target}.${key.value}`;
  if (key.type === 'literal' && (typeof key.value === 'string' || typeof key.value === 'number')) return `${target}[${JSON.stringify(key.value)}]`;
  return `${target}[${expressionText(key)}]`;
}

function boundText(e: Expr | undefined): string {
  if (e === undefined) return '';
  if (e.type === 'literal' && typeof e.value === 'number') return String(e.value);
  if (e.type === 'negate' && e.operand.type === 'literal' && typeof e.operand.value === 'number') return `-${e.operand.value}`;
  return expressionText(e);
}
