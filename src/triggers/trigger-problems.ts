import { parseTemplate } from '../dsl/template-parser.ts';
import { TEMPLATE_MARK, TemplateSyntaxError } from '../dsl/template-ast.ts';
import type { Problem } from '../dsl/reference-problems.ts';
import { templateRefs } from '../dsl/template-refs.ts';
import { childPath } from '../dsl/render.ts';
import { isObject } from '../objects.ts';
import { TEMPLATE_ROOTS } from '../dsl/playbook.schema.ts';
import { cronProblem } from './cron-schedule.ts';
import { memberReads, undefinedNames } from '../dsl/static-reference-problems.ts';
import { closest } from '../dsl/unknown-field-message.ts';
import { headerCaseReads } from './header-case-reads.ts';

/** Why an agent playbook's `triggers:` are refused. */
export const AGENT_TRIGGERS_PROBLEM = 'an agent playbook (metadata.agent: true) runs only via POST /api/execute with resource_kind "agent": no trigger may start it (remove triggers, or metadata.agent)';
/**
 * Why a document registered as an agent (resource_type "agent") may not have `triggers:`, whether
 * or not it says metadata.agent: a fire asks for no kind, so it would start the agent past the
 * resource_kind it runs only by, as the document's own mark does (triggerProblems).
 */
export const REGISTERED_AGENT_TRIGGERS_PROBLEM = 'an agent (registered with resource_type "agent") runs only via POST /api/execute with resource_kind "agent": no trigger may start it (remove triggers, or register it as a playbook)';
/** The roots a trigger's `payload` templates may read, per kind (DESIGN.md "Triggers"). */
export const TRIGGER_TEMPLATE_ROOTS = { schedule: ['trigger'], webhook: ['trigger', 'request'], nats: ['trigger', 'message'] } as const;
/**
 * The fields of each root a fire renders a payload over (scheduler.ts, webhook-delivery.ts with
 * webhook-request.ts, nats-message-fire.ts build them): reading another fails every fire.
 */
const ROOT_FIELDS: Readonly<Record<string, readonly string[]>> = {
  trigger: ['name', 'kind', 'scheduled_time', 'fired_at'],
  request: ['body', 'headers', 'query'],
  message: ['subject', 'seq', 'text', 'json', 'headers'],
};
// Roots that exist elsewhere (a step's templates, another kind of trigger): reading one here is
// named as not available; any other name nothing defines, as undefined.
const KNOWN_ROOTS: ReadonlySet<string> = new Set([...TEMPLATE_ROOTS, 'trigger', 'request', 'message']);

/**
 * Problems of a raw document's `triggers:` that its shape does not show: duplicate names, a cron
 * that does not parse or an unknown timezone, payload and delivery_id templates that do not parse,
 * read a root their kind does not have or a name nothing defines, a delivery_id that reads nothing
 * of the request. Shape problems are the schema's.
 */
export function triggerProblems(document: unknown): Problem[] {
  if (!isObject(document) || !Array.isArray(document.triggers)) return [];
  // A fire starts with no kind asked (actors/start-execution.ts's kindRefusal checks the start
  // routes' only), so an agent's trigger would start it past the resource_kind it runs only by
  // (docs/playbook-dsl.md): the agent, its MCP calls and their tokens, with no one asking for it.
  const problems: Problem[] = [];
  if (isObject(document.metadata) && document.metadata.agent === true && document.triggers.length > 0) problems.push({ path: 'triggers', message: AGENT_TRIGGERS_PROBLEM });
  const seen = new Map<string, number>();
  document.triggers.forEach((trigger, i) => {
    if (!isObject(trigger)) return;
    const path = `triggers[${i}]`;
    if (typeof trigger.name === 'string') {
      const first = seen.get(trigger.name);
      if (first === undefined) seen.set(trigger.name, i);
      else problems.push({ path: `${path}.name`, message: `duplicate trigger name '${trigger.name}' (first at triggers[${first}])` });
    }
    const kind = trigger.kind;
    if (kind !== 'schedule' && kind !== 'webhook' && kind !== 'nats') return;
    if (kind === 'schedule' && typeof trigger.cron === 'string') {
      const problem = cronProblem(trigger.cron, typeof trigger.timezone === 'string' ? trigger.timezone : 'UTC');
      if (problem) problems.push({ path: `${path}.${problem.field}`, message: problem.message });
      // Every problem at once (docs/playbook-dsl.md): a bad timezone hid a bad cron until the next
      // registration. The cron's fields are read alike in any timezone, so UTC checks them.
      const cronAlone = problem?.field === 'timezone' ? cronProblem(trigger.cron, 'UTC') : undefined;
      if (cronAlone) problems.push({ path: `${path}.cron`, message: cronAlone.message });
    }
    templates(trigger.payload, `${path}.payload`, TRIGGER_TEMPLATE_ROOTS[kind], problems);
    if (kind === 'webhook') {
      templates(trigger.delivery_id, `${path}.delivery_id`, ['request'], problems);
      const constant = constantDeliveryId(trigger.delivery_id);
      if (constant) problems.push({ path: `${path}.delivery_id`, message: constant });
    }
  });
  return problems;
}

function templates(value: unknown, path: string, roots: readonly string[], problems: Problem[]): void {
  if (typeof value === 'string') {
    if (!TEMPLATE_MARK.test(value)) return;
    try {
      parseTemplate(value);
    } catch (error) {
      if (!(error instanceof TemplateSyntaxError)) throw error;
      problems.push({ path, message: error.message });
      return;
    }
    for (const root of templateRefs(value).roots) {
      if (KNOWN_ROOTS.has(root) && !roots.includes(root)) problems.push({ path, message: `'${root}' is not available here: a trigger's templates read ${roots.join(', ')}` });
    }
    // Any other name the template reads without defining it fails every fire (templates are strict).
    for (const name of new Set(undefinedNames(value, roots))) if (!KNOWN_ROOTS.has(name)) problems.push({ path, message: `'${name}' is undefined: a trigger's templates read ${roots.join(', ')}` });
    for (const { root, key, text } of memberReads(value, roots)) {
      const fields = ROOT_FIELDS[root] ?? [];
      if (fields.includes(key)) continue;
      const near = closest(key, fields);
      problems.push({ path, message: `'${text}' is undefined: ${root} has ${fields.join(', ')}${near ? ` (did you mean '${near}'?)` : ''}` });
    }
    // Whether guarded or not: under `| default(...)` it is the default at every fire.
    if (roots.includes('request')) {
      for (const read of headerCaseReads(value)) problems.push({ path, message: `'${read.text}' is never there: request.headers has its names lower-cased (write ${read.lowerCased})` });
    }
  } else if (Array.isArray(value)) value.forEach((item, i) => templates(item, `${path}[${i}]`, roots, problems));
  else if (isObject(value)) for (const [key, item] of Object.entries(value)) templates(item, childPath(path, key), roots, problems);
}

/**
 * Why a webhook's `delivery_id` names no delivery, or undefined: one that reads nothing of
 * `request` (a header's name written for its template, a constant) renders the same text for
 * every delivery, so each after the first would be answered a duplicate and start nothing.
 */
function constantDeliveryId(value: unknown): string | undefined {
  if (typeof value !== 'string' || value.trim() === '') return undefined;
  if (TEMPLATE_MARK.test(value)) {
    try {
      parseTemplate(value);
    } catch {
      return undefined; // named as the template's own problem
    }
    if (templateRefs(value).roots.has('request')) return undefined;
  }
  return `'${value}' names every delivery the same, so each after the first would be a duplicate that starts nothing: write a template over request, e.g. "{{ request.headers['x-github-delivery'] }}"`;
}
