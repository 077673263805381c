import { expressionText, type Expr } from '../dsl/template-ast.ts';
import { parseTemplate } from '../dsl/template-parser.ts';
import { isObject } from '../objects.ts';

/** A read of a request header by a name holding capitals: the text as written, and the read of the name as it is there. */
export type HeaderCaseRead = { text: string; lowerCased: string };

const isExpr = (x: unknown): x is Expr => isObject(x) && typeof x.type === 'string';
const isRequestHeaders = (e: Expr): boolean =>
  e.type === 'get' && e.target.type === 'name' && e.target.name === 'request' && e.key.type === 'literal' && e.key.value === 'headers';

/**
 * The reads of `request.headers` by a literal name holding a capital letter in a template
 * (`request.headers['X-GitHub-Delivery']`, `request.headers.X_Token`): a delivery's header names
 * are lower-cased (webhook-request.ts), so such a read is never there. The sender's documentation
 * writes them capitalised (GitHub's X-GitHub-Delivery), so the mistake is easy; as a delivery_id
 * it answered 400 to every delivery, and under `| default('')` it was silently empty.
 */
export function headerCaseReads(source: string): HeaderCaseRead[] {
  let body: unknown;
  try {
    body = parseTemplate(source).body;
  } catch {
    return []; // named as the template's own problem
  }
  const out: HeaderCaseRead[] = [];
  // Every node of the tree, generically: a read may sit in any expression or statement.
  const walk = (x: unknown): void => {
    if (Array.isArray(x)) for (const item of x) walk(item);
    if (!isObject(x)) return;
    if (isExpr(x) && x.type === 'get' && isRequestHeaders(x.target) && x.key.type === 'literal' && typeof x.key.value === 'string' && x.key.value !== x.key.value.toLowerCase()) {
      out.push({ text: expressionText(x), lowerCased: expressionText({ ...x, key: { type: 'literal', value: x.key.value.toLowerCase() } }) });
    }
    for (const value of Object.values(x)) walk(value);
  };
  walk(body);
  return out;
}
