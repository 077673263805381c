import type { Expr, Stmt } from './template-ast.ts';

/** Text that is one `{{ expr }}` (whitespace around it aside) renders to the expression's value: that expression. */
export function nativeExpression(body: readonly Stmt[]): Expr | undefined {
  let found: Expr | undefined;
  for (const stmt of body) {
    if (stmt.type === 'text' && stmt.text.trim() === '') continue;
    if (stmt.type !== 'output' || found) return undefined;
    found = stmt.expr;
  }
  return found;
}
