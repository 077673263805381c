// A refusal from the server as a person reads it, for every client command: apart from
// register-file.ts, which loads the YAML reader to place problems at file:line:col.
import * as v from 'valibot';
import type { ServerError } from '../worker/server-client.ts';
import { printableText } from './text-width.ts';

/** A refusal's detail: its message, errors and problems (each at a document path, with line and column when the server placed it). */
export const problemsDetail = v.object({
  message: v.optional(v.string()),
  errors: v.optional(v.array(v.string())),
  problems: v.optional(v.array(v.object({ path: v.string(), message: v.string(), line: v.optional(v.number()), column: v.optional(v.number()) }))),
});

/**
 * The server's message (`detail.message` when `short`, else the request and status too), then one
 * indented line per problem in `detail.errors` that the message does not say already (a refused
 * fire's message quotes its one problem: `payload: X` beside a message ending in X).
 */
export function describeServerError(err: ServerError, short = false): string {
  const d = v.safeParse(problemsDetail, err.detail);
  const message = short && d.success && d.output.message ? printableText(d.output.message) : err.message;
  const said = (p: string) => message.includes(p) || (p.includes(': ') && message.includes(p.slice(p.indexOf(': ') + 2)));
  const problems = d.success && d.output.errors?.length ? d.output.errors.map(printableText).filter((p) => !said(p)).map((p) => `\n  - ${p}`).join('') : '';
  return `${message}${problems}`;
}
