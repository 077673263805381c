import nunjucks from 'nunjucks';
import { TemplateSyntaxError, type Args, type BinaryOp, type CompareOp, type Expr, type MacroDef, type SetTarget, type Stmt, type Template } from './template-ast.ts';
import { nativeExpression } from './native-expression.ts';
import { filterNames } from './template-filters.ts';
import { templateTests } from './template-tests.ts';
import { didYouMean } from './unknown-field-message.ts';

// The one adapter between nunjucks and the service: templates are parsed by nunjucks' parser,
// which builds nodes and runs nothing (with one method of ours, parsePostfix, for Python's slices
// `x[a:b:c]`, which nunjucks lacks), and turned here into our own tree (template-ast.ts);
// nunjucks' compiler (which generates JavaScript) is never used, and no other file imports
// nunjucks. Its parser is undocumented: test/unit/template-parser-contract.test.ts pins what this
// file gives for every construct we support, so an upgrade that changes it fails there.
// Everything that can be refused without the data is refused here, so registration reports it:
// syntax, unknown filters and tests, tags that need a loader, assignments to anything but a name.

const CACHE_LIMIT = 2000;
const cache = new Map<string, Template | TemplateSyntaxError>();

/**
 * The template of `source` (cached by its text, bounded). Throws TemplateSyntaxError, with the
 * line and column when nunjucks gives them, for anything that cannot be evaluated.
 */
export function parseTemplate(source: string): Template {
  let entry = cache.get(source);
  if (entry === undefined) {
    entry = build(source);
    if (cache.size >= CACHE_LIMIT) cache.clear();
    cache.set(source, entry);
  }
  if (entry instanceof TemplateSyntaxError) throw entry;
  return entry;
}

function build(source: string): Template | TemplateSyntaxError {
  try {
    const body = statements(children(parse(source)));
    return { body, native: nativeExpression(body) };
  } catch (error) {
    if (error instanceof TemplateSyntaxError) return error;
    if (error instanceof RangeError) return new TemplateSyntaxError('the template is nested too deeply');
    return parseErrorOf(error);
  }
}

// nunjucks.parser, .lexer and .nodes are undocumented and untyped: what we use of them is checked
// once here, and their nodes are read through node(). Each template gets its own Parser whose
// parsePostfix is ours (slices, below); nunjucks' class, modules and nodes stay as they are.
const member = (from: unknown, name: string): unknown => (from !== null && (typeof from === 'object' || typeof from === 'function') ? Reflect.get(from, name) : undefined);
const lexer: unknown = member(nunjucks, 'lexer');
const nodes: unknown = member(nunjucks, 'nodes');
const Parser: unknown = member(member(nunjucks, 'parser'), 'Parser');
const PARSER_METHODS = ['parseAsRoot', 'parsePostfix', 'parseExpression', 'parseSignature', 'peekToken', 'nextToken', 'fail'];
const NODE_CLASSES = ['Node', 'FunCall', 'LookupVal', 'Literal'];
if (typeof member(lexer, 'lex') !== 'function' || PARSER_METHODS.some((m) => typeof member(member(Parser, 'prototype'), m) !== 'function') || NODE_CLASSES.some((n) => typeof member(nodes, n) !== 'function')) {
  throw new Error(`nunjucks.lexer.lex, nunjucks.parser.Parser (${PARSER_METHODS.join(', ')}) or nunjucks.nodes (${NODE_CLASSES.join(', ')}) is missing: templates cannot be parsed`);
}
const tokenType = (name: string): string => {
  const type = member(lexer, `TOKEN_${name}`);
  if (typeof type !== 'string') throw new Error(`nunjucks.lexer.TOKEN_${name} is missing: templates cannot be parsed`);
  return type;
};
const TOKEN = { leftParen: tokenType('LEFT_PAREN'), leftBracket: tokenType('LEFT_BRACKET'), rightBracket: tokenType('RIGHT_BRACKET'), colon: tokenType('COLON'), comma: tokenType('COMMA'), operator: tokenType('OPERATOR'), symbol: tokenType('SYMBOL') };
// What may follow `.`: any name, as in Jinja (`x.none` reads the key 'none'), though nunjucks
// lexes `none`, `null`, `true` and `false` as literals and its own parser refuses them there.
const ATTRIBUTE_TOKENS = new Set([TOKEN.symbol, tokenType('NONE'), tokenType('BOOLEAN')]);
// A node class of our own, made by nunjucks' Node.extend (a subclass: nunjucks.nodes is unchanged).
const SliceNode: unknown = call(member(nodes, 'Node'), 'extend', 'Slice', { fields: ['target', 'start', 'stop', 'step'] });

function parse(source: string): unknown {
  const parser = instantiate(Parser, call(lexer, 'lex', source));
  Reflect.set(parser, 'parsePostfix', (target: unknown) => parsePostfix(parser, target));
  return call(parser, 'parseAsRoot');
}

// The override is reached (nunjucks' parser still calls this.parsePostfix), or nothing parses.
if (children(children(parse('{{ x[1:] }}'))[0])[0].typename !== 'Slice') throw new Error("nunjucks' parser no longer calls parsePostfix: slices cannot be parsed");

function call(target: unknown, method: string, ...args: unknown[]): unknown {
  const fn = member(target, method);
  if (typeof fn !== 'function') throw new TemplateSyntaxError('unexpected template structure');
  return Reflect.apply(fn, target, args);
}

function instantiate(Class: unknown, ...args: unknown[]): object {
  const made: unknown = typeof Class === 'function' ? Reflect.construct(Class, args) : undefined;
  if (made === null || typeof made !== 'object') throw new TemplateSyntaxError('unexpected template structure');
  return made;
}

/** A nunjucks node of class `name` (or the Slice class) at `at`, with its fields in order. */
function construct(Class: unknown, at: Token, ...fields: unknown[]): object {
  return instantiate(Class, at.lineno, at.colno, ...fields);
}

type Token = { type: string; value: unknown; lineno: number; colno: number };

/** The parser's next token, or undefined at the end of the text. */
function peek(parser: unknown): Token | undefined {
  const tok = call(parser, 'peekToken');
  if (tok === null || tok === undefined) return undefined;
  const [type, lineno, colno] = [member(tok, 'type'), member(tok, 'lineno'), member(tok, 'colno')];
  if (typeof type !== 'string' || typeof lineno !== 'number' || typeof colno !== 'number') throw new TemplateSyntaxError('unexpected template structure');
  return { type, value: member(tok, 'value'), lineno, colno };
}

/** Consumes the next token when it is of `type`. */
function skip(parser: unknown, type: unknown): boolean {
  if (peek(parser)?.type !== type) return false;
  call(parser, 'nextToken');
  return true;
}

function parseFail(parser: unknown, message: string, at?: Token): never {
  call(parser, 'fail', message, at?.lineno, at?.colno);
  throw new TemplateSyntaxError(message);
}

// nunjucks' Parser#parsePostfix (3.2.4: calls, `.name`, `[index]`) with Python's slices added in
// `[...]`, and any name after `.`. Mirrored whole because nunjucks' own loop reads every `[` as a list.
function parsePostfix(parser: unknown, target: unknown): unknown {
  let node = target;
  for (let tok = peek(parser); tok; tok = peek(parser)) {
    if (tok.type === TOKEN.leftParen) node = construct(member(nodes, 'FunCall'), tok, node, call(parser, 'parseSignature'));
    else if (tok.type === TOKEN.leftBracket) node = subscript(parser, node, tok);
    else if (tok.type === TOKEN.operator && tok.value === '.') {
      call(parser, 'nextToken');
      const name = peek(parser);
      if (!name || !ATTRIBUTE_TOKENS.has(name.type)) parseFail(parser, `expected name as lookup value, got ${String(name?.value)}`, name);
      call(parser, 'nextToken');
      node = construct(member(nodes, 'LookupVal'), tok, node, construct(member(nodes, 'Literal'), name, name.value));
    } else break;
  }
  return node;
}

// `[index]` (a LookupVal, as nunjucks makes it) or `[start:stop:step]`, any part left out (a Slice).
function subscript(parser: unknown, target: unknown, open: Token): unknown {
  call(parser, 'nextToken');
  const colon = (): boolean => peek(parser)?.type === TOKEN.colon;
  const closing = (): boolean => peek(parser)?.type === TOKEN.rightBracket;
  const start = colon() ? null : call(parser, 'parseExpression');
  if (!colon()) {
    if (!skip(parser, TOKEN.rightBracket)) parseFail(parser, peek(parser)?.type === TOKEN.comma ? 'invalid index' : 'expected ] after an index');
    return construct(member(nodes, 'LookupVal'), open, target, start);
  }
  call(parser, 'nextToken');
  const stop = colon() || closing() ? null : call(parser, 'parseExpression');
  const step = skip(parser, TOKEN.colon) && !closing() ? call(parser, 'parseExpression') : null;
  if (!skip(parser, TOKEN.rightBracket)) parseFail(parser, 'expected ] after a slice');
  return construct(SliceNode, open, target, start, stop, step);
}

// nunjucks' own messages, less the names of its functions: "parseAggregate: expected comma ...".
function parseErrorOf(error: unknown): TemplateSyntaxError {
  const message = (error instanceof Error ? error.message : String(error)).replace(/^[a-zA-Z]+: /, '').trim();
  const line = error instanceof Error ? Reflect.get(error, 'lineno') : undefined;
  const column = error instanceof Error ? Reflect.get(error, 'colno') : undefined;
  // The parser's positions are 1-based already (its nodes' are 0-based).
  return typeof line === 'number' && typeof column === 'number' ? new TemplateSyntaxError(`${message} (line ${line}, column ${column})`, { line, column }) : new TemplateSyntaxError(message);
}

type RawNode = { typename: string; lineno: unknown; colno: unknown };

function isNode(value: unknown): value is RawNode {
  return value !== null && typeof value === 'object' && typeof Reflect.get(value, 'typename') === 'string';
}

function field(node: RawNode, name: string): unknown {
  return Reflect.get(node, name);
}

function node(value: unknown): RawNode {
  if (!isNode(value)) throw new TemplateSyntaxError('unexpected template structure');
  return value;
}

function children(value: unknown): RawNode[] {
  const list = field(node(value), 'children');
  if (!Array.isArray(list)) throw new TemplateSyntaxError('unexpected template structure');
  return list.map(node);
}

function fail(raw: RawNode | undefined, message: string): never {
  // A node's place is 0-based; a message's and `at` are 1-based.
  const at = raw && typeof raw.lineno === 'number' && typeof raw.colno === 'number' ? { line: raw.lineno + 1, column: raw.colno + 1 } : undefined;
  throw new TemplateSyntaxError(at ? `${message} (line ${at.line}, column ${at.column})` : message, at);
}

const UNSUPPORTED_TAGS: Record<string, string> = {
  Block: 'block',
  Extends: 'extends',
  Include: 'include',
  Import: 'import',
  FromImport: 'from',
  Super: 'super',
  Switch: 'switch',
  IfAsync: 'ifAsync',
  AsyncEach: 'asyncEach',
  AsyncAll: 'asyncAll',
  CallExtension: 'extension',
  CallExtensionAsync: 'extension',
  FilterAsync: 'async filter',
};

function unsupported(raw: RawNode): never {
  const tag = UNSUPPORTED_TAGS[raw.typename];
  if (tag) fail(raw, `'${tag}' is not supported in playbook templates`);
  fail(raw, `unexpected ${raw.typename}`);
}

function statements(nodes: RawNode[]): Stmt[] {
  const out: Stmt[] = [];
  for (const raw of nodes) {
    switch (raw.typename) {
      case 'Output':
        for (const child of children(raw)) {
          if (child.typename === 'TemplateData') {
            const text = field(child, 'value');
            if (typeof text === 'string' && text !== '') out.push({ type: 'text', text });
          } else {
            out.push({ type: 'output', expr: expression(child) });
          }
        }
        break;
      case 'If': {
        const otherwise = field(raw, 'else_');
        out.push({
          type: 'if',
          cond: expression(field(raw, 'cond')),
          then: statements(children(field(raw, 'body'))),
          otherwise: otherwise === null || otherwise === undefined ? [] : isNode(otherwise) && otherwise.typename === 'If' ? statements([otherwise]) : statements(children(otherwise)),
        });
        break;
      }
      case 'For': {
        const target = node(field(raw, 'name'));
        const names = target.typename === 'Array' ? children(target).map((n) => symbolName(n, 'a loop variable')) : [symbolName(target, 'a loop variable')];
        const otherwise = field(raw, 'else_');
        // nunjucks reads Jinja's loop filter `in items if cond` as an inline if without else.
        const arr = node(field(raw, 'arr'));
        const filtered = arr.typename === 'InlineIf' && !isNode(field(arr, 'else_'));
        out.push({
          type: 'for',
          names,
          iterable: expression(filtered ? field(arr, 'body') : arr),
          filter: filtered ? expression(field(arr, 'cond')) : undefined,
          body: statements(children(field(raw, 'body'))),
          otherwise: otherwise === null || otherwise === undefined ? [] : statements(children(otherwise)),
        });
        break;
      }
      case 'Set': {
        const rawTargets = field(raw, 'targets');
        const targets = (Array.isArray(rawTargets) ? rawTargets : []).map((t) => setTarget(node(t)));
        const value = field(raw, 'value');
        out.push({ type: 'set', targets, value: value === null || value === undefined ? block(field(raw, 'body')) : expression(value) });
        break;
      }
      case 'Macro':
        out.push({ type: 'macro', macro: macro(raw) });
        break;
      default:
        unsupported(raw);
    }
  }
  return out;
}

function block(capture: unknown): Expr {
  return { type: 'block', body: statements(children(field(node(capture), 'body'))) };
}

function symbolName(raw: RawNode, what: string): string {
  const name = field(raw, 'value');
  if (raw.typename !== 'Symbol' || typeof name !== 'string') fail(raw, `${what} must be a name`);
  return name;
}

// `{% set x = ... %}`, or `{% set ns.attr = ... %}` for a namespace(); nothing else is assignable.
function setTarget(raw: RawNode): SetTarget {
  if (raw.typename === 'Symbol') return { name: symbolName(raw, 'an assignment target'), attribute: undefined };
  if (raw.typename === 'LookupVal') {
    const target = node(field(raw, 'target'));
    const key = node(field(raw, 'val'));
    const attribute = field(key, 'value');
    if (target.typename === 'Symbol' && key.typename === 'Literal' && typeof attribute === 'string') {
      return { name: symbolName(target, 'an assignment target'), attribute };
    }
  }
  fail(raw, 'only a name or a namespace attribute (ns.attr) can be assigned');
}

function macro(raw: RawNode): MacroDef {
  const name = symbolName(node(field(raw, 'name')), 'a macro name');
  const params: MacroDef['params'] = [];
  for (const arg of children(field(raw, 'args'))) {
    if (arg.typename === 'KeywordArgs') {
      for (const pair of children(arg)) params.push({ name: symbolName(node(field(pair, 'key')), 'a macro argument'), fallback: expression(field(pair, 'value')) });
    } else {
      params.push({ name: symbolName(arg, 'a macro argument'), fallback: undefined });
    }
  }
  return { name, params, body: statements(children(field(raw, 'body'))) };
}

function callArgs(list: RawNode[]): { args: Args; caller: MacroDef | undefined } {
  const args: Args = { positional: [], keywords: [] };
  let caller: MacroDef | undefined;
  for (const arg of list) {
    if (arg.typename !== 'KeywordArgs') {
      args.positional.push(expression(arg));
      continue;
    }
    for (const pair of children(arg)) {
      const key = symbolName(node(field(pair, 'key')), 'an argument name');
      const val = node(field(pair, 'value'));
      // `{% call m() %}body{% endcall %}` reaches the macro as a `caller` argument holding the body.
      if (val.typename === 'Caller') caller = macro(val);
      else args.keywords.push([key, expression(val)]);
    }
  }
  return { args, caller };
}

const BINARY: Record<string, BinaryOp> = { Add: '+', Sub: '-', Mul: '*', Div: '/', FloorDiv: '//', Mod: '%', Pow: '**', Concat: '~' };
const COMPARE: Record<string, CompareOp> = { '==': '==', '===': '==', '!=': '!=', '!==': '!=', '<': '<', '>': '>', '<=': '<=', '>=': '>=' };
const CONSTANTS: Record<string, boolean | null> = { True: true, False: false, None: null };

function expression(value: unknown): Expr {
  const raw = node(value);
  switch (raw.typename) {
    case 'Literal': {
      const literal = field(raw, 'value');
      if (literal === null || typeof literal === 'string' || typeof literal === 'number' || typeof literal === 'boolean') return { type: 'literal', value: literal };
      fail(raw, 'regular expression literals are not supported');
    }
    case 'Symbol': {
      const name = symbolName(raw, 'a name');
      return Object.hasOwn(CONSTANTS, name) ? { type: 'literal', value: CONSTANTS[name] } : { type: 'name', name };
    }
    case 'LookupVal':
      return { type: 'get', target: expression(field(raw, 'target')), key: expression(field(raw, 'val')) };
    case 'Slice': {
      const part = (name: string): Expr | undefined => {
        const value = field(raw, name);
        return value === null || value === undefined ? undefined : expression(value);
      };
      return { type: 'slice', target: expression(field(raw, 'target')), start: part('start'), stop: part('stop'), step: part('step') };
    }
    case 'Group': {
      const items = children(raw);
      return items.length === 1 ? expression(items[0]) : { type: 'list', items: items.map(expression) };
    }
    case 'Array':
      return { type: 'list', items: children(raw).map(expression) };
    case 'Dict':
      return {
        type: 'dict',
        pairs: children(raw).map((pair): [string, Expr] => {
          const key = node(field(pair, 'key'));
          const name = field(key, 'value');
          if ((key.typename !== 'Symbol' && key.typename !== 'Literal') || typeof name !== 'string') fail(key, 'dict keys must be strings or names');
          return [name, expression(field(pair, 'value'))];
        }),
      };
    case 'FunCall': {
      const callee = node(field(raw, 'name'));
      const { args, caller } = callArgs(children(field(raw, 'args')));
      if (callee.typename === 'Symbol') return { type: 'call', name: symbolName(callee, 'a function'), args, caller };
      const key = callee.typename === 'LookupVal' ? node(field(callee, 'val')) : undefined;
      const method = key ? field(key, 'value') : undefined;
      if (key?.typename === 'Literal' && typeof method === 'string' && caller === undefined) {
        return { type: 'method', target: expression(field(callee, 'target')), name: method, args };
      }
      fail(raw, 'only functions, macros and methods (x.name()) can be called');
    }
    case 'Filter': {
      const name = symbolName(node(field(raw, 'name')), 'a filter');
      if (!filterNames.has(name)) fail(raw, `unknown filter '${name}'${didYouMean(name, filterNames)}`);
      const [target, ...rest] = children(field(raw, 'args'));
      const { args } = callArgs(rest);
      return { type: 'filter', name, target: target.typename === 'Capture' ? block(target) : expression(target), args };
    }
    case 'Is':
      return test(raw);
    case 'Not':
      return { type: 'not', operand: expression(field(raw, 'target')) };
    case 'Neg':
    case 'Pos':
      return { type: raw.typename === 'Neg' ? 'negate' : 'plus', operand: expression(field(raw, 'target')) };
    case 'And':
    case 'Or':
      return { type: raw.typename === 'And' ? 'and' : 'or', left: expression(field(raw, 'left')), right: expression(field(raw, 'right')) };
    case 'In':
      return { type: 'in', left: expression(field(raw, 'left')), right: expression(field(raw, 'right')) };
    case 'Compare': {
      const ops = field(raw, 'ops');
      return {
        type: 'compare',
        first: expression(field(raw, 'expr')),
        rest: (Array.isArray(ops) ? ops : []).map((operand) => {
          const op = COMPARE[String(field(node(operand), 'type'))];
          if (!op) fail(node(operand), 'unknown comparison');
          return { op, operand: expression(field(node(operand), 'expr')) };
        }),
      };
    }
    case 'InlineIf': {
      const otherwise = field(raw, 'else_');
      return {
        type: 'conditional',
        cond: expression(field(raw, 'cond')),
        then: expression(field(raw, 'body')),
        otherwise: otherwise === null || otherwise === undefined ? undefined : expression(otherwise),
      };
    }
    default:
      if (Object.hasOwn(BINARY, raw.typename)) return { type: 'binary', op: BINARY[raw.typename], left: expression(field(raw, 'left')), right: expression(field(raw, 'right')) };
      unsupported(raw);
  }
}

// `x is name`, `x is name(args)`; nunjucks reads `none`, `true` and `false` there as literals.
function test(raw: RawNode): Expr {
  const right = node(field(raw, 'right'));
  let name: string;
  let args: Expr[] = [];
  if (right.typename === 'FunCall') {
    name = symbolName(node(field(right, 'name')), 'a test');
    const call = callArgs(children(field(right, 'args')));
    if (call.args.keywords.length > 0 || call.caller) fail(right, 'tests take no named arguments');
    args = call.args.positional;
  } else if (right.typename === 'Literal' && (field(right, 'value') === null || typeof field(right, 'value') === 'boolean')) {
    name = String(field(right, 'value')).replace('null', 'none');
  } else {
    name = symbolName(right, 'a test');
    name = name === 'None' ? 'none' : name === 'True' ? 'true' : name === 'False' ? 'false' : name;
  }
  if (!templateTests.has(name)) fail(right, `unknown test '${name}'${didYouMean(name, templateTests.keys())}`);
  return { type: 'test', name, target: expression(field(raw, 'left')), args };
}
