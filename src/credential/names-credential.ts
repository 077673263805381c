// Which credentials a command's tasks name, decided from what the command was issued with (its
// tasks, their context and the playbook's keychain definitions), the way its worker will use them:
// a task's `auth`; an mcp task's `server` whose registered `auth` it falls back to; the `auth` of
// a keychain entry a task's templates read. Templated names are rendered with the command's
// context; one that cannot be (it reads this command's own task outcomes) names nothing.
import { renderValue } from '../dsl/render.ts';
import { TEMPLATE_MARK } from '../dsl/template-ast.ts';
import { templateRefs } from '../dsl/template-refs.ts';
import { isObject } from '../objects.ts';

/** What a command holds that may name a credential; `mcp_servers`: registered servers whose own `auth` is the one asked for. */
export type CommandGrants = { tasks: unknown; context: unknown; keychain: unknown; mcp_servers: readonly string[] };

const UNRENDERABLE = Symbol('unrenderable');

/** A field as the worker will see it: a template rendered with `ctx`, anything else as written. */
function rendered(value: unknown, ctx: Record<string, unknown>, path: string): unknown {
  if (typeof value !== 'string' || !TEMPLATE_MARK.test(value)) return value;
  try {
    return renderValue(value, ctx, path);
  } catch {
    return UNRENDERABLE;
  }
}

const absent = (value: unknown): boolean => value === undefined || value === null;

/**
 * True when the command's tasks name credential `name`: directly (`auth`), through an mcp task's
 * registered `server` when the task names no `auth`, or through the `auth` of a keychain entry
 * its templates read.
 */
export function namesCredential(grants: CommandGrants, name: string): boolean {
  const tasks = Array.isArray(grants.tasks) ? grants.tasks.filter(isObject) : [];
  const context = isObject(grants.context) ? grants.context : {};
  for (const task of tasks) {
    const auth = rendered(task.auth, context, 'auth');
    if (auth === name) return true;
    if (task.kind === 'mcp' && absent(auth)) {
      const server = rendered(task.server, context, 'server');
      if (typeof server === 'string' && grants.mcp_servers.includes(server)) return true;
    }
  }
  const entries = new Set(tasks.flatMap((task) => [...templateRefs(task).keychain]));
  if (!entries.size || !Array.isArray(grants.keychain)) return false;
  // Definitions render with the context, never the keychain (as the worker's resolver does).
  const definitionContext: Record<string, unknown> = { ...context };
  delete definitionContext.keychain;
  return grants.keychain.some((definition) => isObject(definition) && typeof definition.name === 'string' && entries.has(definition.name) && rendered(definition.auth, definitionContext, `keychain.${definition.name}.auth`) === name);
}
