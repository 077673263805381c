import { TEMPLATE_MARK, type Expr, type Stmt, type Template } from './template-ast.ts';
import { parseTemplate } from './template-parser.ts';

/**
 * What the templates of a value read from their context: root names, which `steps.<name>`, and
 * which `keychain.<name>` (in order of first use).
 */
export type TemplateRefs = { roots: ReadonlySet<string>; steps: ReadonlySet<string> | 'all'; keychain: ReadonlySet<string> };

type Found = { roots: Set<string>; steps: Set<string>; allSteps: boolean; keychain: Set<string> };

/**
 * The roots, steps and keychain entries that every template string inside `value` reads. A
 * template that reads `steps` other than as `steps.<literal>` (or fails to parse) reads all steps.
 */
export function templateRefs(value: unknown): TemplateRefs {
  const found: Found = { roots: new Set(), steps: new Set(), allSteps: false, keychain: new Set() };
  const visit = (v: unknown): void => {
    if (typeof v === 'string') {
      if (!TEMPLATE_MARK.test(v)) return;
      let template: Template;
      try {
        template = parseTemplate(v);
      } catch {
        // A broken template fails when the worker renders it; give it everything so it fails the same way.
        found.allSteps = true;
        for (const r of ['workload', 'args', 'vars', 'steps']) found.roots.add(r);
        return;
      }
      statements(template.body, found);
    } else if (Array.isArray(v)) for (const x of v) visit(x);
    else if (v && typeof v === 'object') for (const x of Object.values(v)) visit(x);
  };
  visit(value);
  return { roots: found.roots, steps: found.allSteps ? 'all' : found.steps, keychain: found.keychain };
}

function statements(body: readonly Stmt[], found: Found): void {
  for (const stmt of body) {
    switch (stmt.type) {
      case 'text':
        break;
      case 'output':
        expression(stmt.expr, found);
        break;
      case 'if':
        expression(stmt.cond, found);
        statements(stmt.then, found);
        statements(stmt.otherwise, found);
        break;
      case 'for':
        expression(stmt.iterable, found);
        if (stmt.filter) expression(stmt.filter, found);
        statements(stmt.body, found);
        statements(stmt.otherwise, found);
        break;
      case 'set':
        expression(stmt.value, found);
        break;
      case 'macro':
        for (const param of stmt.macro.params) if (param.fallback) expression(param.fallback, found);
        statements(stmt.macro.body, found);
        break;
    }
  }
}

/** The literal name in `root.name` / `root['name']`. */
function literalMember(e: Extract<Expr, { type: 'get' }>, root: string): string | undefined {
  if (e.target.type !== 'name' || e.target.name !== root) return undefined;
  return e.key.type === 'literal' && typeof e.key.value === 'string' ? e.key.value : undefined;
}

function expression(e: Expr, found: Found): void {
  switch (e.type) {
    case 'literal':
      return;
    case 'name':
      found.roots.add(e.name);
      if (e.name === 'steps') found.allSteps = true;
      return;
    case 'get': {
      const step = literalMember(e, 'steps');
      if (step !== undefined) {
        found.roots.add('steps');
        found.steps.add(step);
        return;
      }
      const entry = literalMember(e, 'keychain');
      if (entry !== undefined) found.keychain.add(entry);
      expression(e.target, found);
      expression(e.key, found);
      return;
    }
    case 'slice':
      expression(e.target, found);
      for (const bound of [e.start, e.stop, e.step]) if (bound) expression(bound, found);
      return;
    case 'list':
      for (const item of e.items) expression(item, found);
      return;
    case 'dict':
      for (const [, item] of e.pairs) expression(item, found);
      return;
    case 'call':
    case 'method':
    case 'filter':
      if (e.type !== 'call') expression(e.target, found);
      for (const arg of e.args.positional) expression(arg, found);
      for (const [, arg] of e.args.keywords) expression(arg, found);
      if (e.type === 'call' && e.caller) statements(e.caller.body, found);
      return;
    case 'block':
      statements(e.body, found);
      return;
    case 'test':
      expression(e.target, found);
      for (const arg of e.args) expression(arg, found);
      return;
    case 'not':
    case 'negate':
    case 'plus':
      expression(e.operand, found);
      return;
    case 'and':
    case 'or':
    case 'binary':
    case 'in':
      expression(e.left, found);
      expression(e.right, found);
      return;
    case 'compare':
      expression(e.first, found);
      for (const { operand } of e.rest) expression(operand, found);
      return;
    case 'conditional':
      expression(e.cond, found);
      expression(e.then, found);
      if (e.otherwise) expression(e.otherwise, found);
      return;
  }
}
