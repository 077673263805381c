import nunjucks from 'nunjucks';

/** What the templates of a value read from their context: root names, and which `steps.<name>`. */
export type TemplateRefs = { roots: ReadonlySet<string>; steps: ReadonlySet<string> | 'all' };

type AstNode = { typename: string; fields: string[]; value?: unknown; [field: string]: unknown };

const TEMPLATE_MARK = /\{\{|\{%|\{#/;

// The parser is nunjucks' own: undocumented and untyped, so checked once here and its nodes
// read through isNode().
const nunjucksParser: unknown = Reflect.get(nunjucks, 'parser');
const parseFn: unknown = nunjucksParser && typeof nunjucksParser === 'object' ? Reflect.get(nunjucksParser, 'parse') : undefined;
if (typeof parseFn !== 'function') throw new Error('nunjucks.parser.parse is missing: template references cannot be read');
const parse = (src: string): unknown => Reflect.apply(parseFn, nunjucksParser, [src]);

function isNode(v: unknown): v is AstNode {
  return typeof v === 'object' && v !== null && typeof (v as { typename?: unknown }).typename === 'string' && Array.isArray((v as { fields?: unknown }).fields);
}

function stepNameOf(node: AstNode): string | undefined {
  const target = node.target;
  const val = node.val;
  if (!isNode(target) || target.typename !== 'Symbol' || target.value !== 'steps') return undefined;
  return isNode(val) && val.typename === 'Literal' && typeof val.value === 'string' ? val.value : undefined;
}

/**
 * The roots and steps that every template string inside `value` reads. A template that reads
 * `steps` other than as `steps.<literal>` (or fails to parse) reads all steps.
 */
export function templateRefs(value: unknown): TemplateRefs {
  const roots = new Set<string>();
  const steps = new Set<string>();
  let allSteps = false;
  const visitAst = (node: AstNode): void => {
    if (node.typename === 'LookupVal') {
      const step = stepNameOf(node);
      if (step !== undefined) {
        roots.add('steps');
        steps.add(step);
        return;
      }
    }
    if (node.typename === 'Symbol' && typeof node.value === 'string') {
      roots.add(node.value);
      if (node.value === 'steps') allSteps = true;
    }
    for (const field of node.fields) {
      const child = node[field];
      if (isNode(child)) visitAst(child);
      else if (Array.isArray(child)) for (const c of child) if (isNode(c)) visitAst(c);
    }
  };
  const visit = (v: unknown): void => {
    if (typeof v === 'string') {
      if (!TEMPLATE_MARK.test(v)) return;
      let ast: unknown;
      try {
        ast = parse(v);
      } catch {
        // A broken template fails when the worker renders it; give it everything so it fails the same way.
        allSteps = true;
        for (const r of ['workload', 'args', 'vars', 'steps']) roots.add(r);
        return;
      }
      if (isNode(ast)) visitAst(ast);
    } else if (Array.isArray(v)) for (const x of v) visit(x);
    else if (v && typeof v === 'object') for (const x of Object.values(v)) visit(x);
  };
  visit(value);
  return { roots, steps: allSteps ? 'all' : steps };
}
