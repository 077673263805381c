import { parsePlaybook, type NormalizedPlaybook, type Problem } from '../src/dsl/parse-playbook.ts';
import { isObject } from '../src/objects.ts';
import { inapplicableOutcome } from './inapplicable-outcome.ts';
import { outcomeProblem, type SimulatedOutcome } from './simulated-outcome.ts';

// What the simulation API (svc-orchestrator/simulate) takes from a user's test, checked before
// anything runs: its callers are plain JavaScript too (`node --test`, Jest), so nothing its types
// promise is taken for granted. A playbook is read only by registration's parser, whatever form it
// comes in: the YAML text, the document a YAML loader made of it, or what the parser returned.

/**
 * An invalid playbook given to a simulation: its problems as registration answers them (path,
 * message, line and column in the text), and each in the message as `line:column: path: message`,
 * as `svc simulate` prints them, so a user's failing test says where to look.
 */
export class InvalidPlaybookError extends Error {
  readonly problems: readonly Problem[];
  constructor(problems: readonly Problem[]) {
    // A document given as an object has no text to place a problem in: its path says where.
    super(`invalid playbook: ${problems.map((p) => `${p.line === undefined ? '' : `${p.line}:${p.column ?? 1}: `}${p.path === '$' ? '' : `${p.path}: `}${p.message}`).join('; ')}`);
    this.name = 'InvalidPlaybookError';
    this.problems = problems;
  }
}

/** Parses playbook YAML or throws an InvalidPlaybookError listing its problems with their places. */
export function playbookFromYaml(yaml: string): NormalizedPlaybook {
  const parsed = parsePlaybook(yaml);
  if (!parsed.ok) throw new InvalidPlaybookError(parsed.problems);
  return parsed.playbook;
}

/** Whether `x` has the shape parsePlaybook gives (an entry, each step's tasks and arcs), not a document's. */
const isNormalized = (x: Record<string, unknown>): x is NormalizedPlaybook =>
  typeof x.entry === 'string' && Array.isArray(x.workflow) && x.workflow.every((s) => isObject(s) && typeof s.step === 'string' && Array.isArray(s.tasks) && isObject(s.next) && Array.isArray(s.next.arcs));

/**
 * The playbook a simulation runs: parsed from YAML text, as parsed already, or a document object
 * (js-yaml's `load` of the text) read as its JSON text is; else an InvalidPlaybookError naming
 * the field, or saying what was given instead.
 */
export function playbookOf(given: unknown): NormalizedPlaybook {
  if (typeof given === 'string') return playbookFromYaml(given);
  if (!isObject(given)) throw new InvalidPlaybookError([{ path: '$', message: `expected the playbook's YAML text or its parsed document, got ${kindOf(given)}` }]);
  if (isNormalized(given)) return given;
  const parsed = parsePlaybook(JSON.stringify(given));
  if (parsed.ok) return parsed.playbook;
  // Places in a JSON text the caller never saw would mislead.
  throw new InvalidPlaybookError(parsed.problems.map(({ path, message }) => ({ path, message })));
}

const isOutcome = (o: unknown): o is SimulatedOutcome => outcomeProblem(o) === undefined;

/** What a value is, for a message about a wrong one. */
const kindOf = (x: unknown): string => (x === null ? 'null' : Array.isArray(x) ? 'array' : typeof x);

/** Throws an Error when a simulation's options are no object (plain JavaScript may pass null). */
export function checkOptions(opts: unknown): void {
  if (!isObject(opts)) throw new Error(`options: expected an object ({payload, results, ...}), got ${kindOf(opts)}`);
}

/**
 * Throws an Error naming the field when `outcomes` is not an object of step names to an outcome
 * or a list of them (an unknown value was taken as an error: a typo simulated the error path; an
 * `error:CODE` whose code no task fails with),
 * when it, or `results`, names a step the playbook lacks, when an outcome is one its step cannot
 * have (inapplicableOutcome), or when `payload` is no object (an array was merged into the workload
 * as keys 0, 1, ...).
 */
export function checkSimulationInput(pb: NormalizedPlaybook, outcomes: unknown, results: unknown, payload: unknown): void {
  if (payload !== undefined && (!isObject(payload) || Array.isArray(payload))) throw new Error(`payload: expected an object (a start's payload), got ${kindOf(payload)}`);
  for (const [what, given] of [['outcomes', outcomes], ['results', results ?? {}]] as const) {
    if (!isObject(given) || Array.isArray(given)) throw new Error(`${what}: expected an object of ${what} by step name, got ${kindOf(given)}`);
    const unknown = Object.keys(given).filter((step) => !pb.workflow.some((s) => s.step === step));
    if (unknown.length) throw new Error(`${what} name no step of the playbook: ${unknown.join(', ')}`);
  }
  for (const [step, chosen] of Object.entries(outcomes as Record<string, unknown>)) {
    const list = Array.isArray(chosen) ? chosen : [chosen];
    const bad = list.findIndex((o) => !isOutcome(o));
    const field = (i: number) => `outcomes.${step}${Array.isArray(chosen) ? `[${i}]` : ''}`;
    if (bad >= 0) throw new Error(`${field(bad)}: ${outcomeProblem(list[bad])}`);
    // As `svc simulate` refuses it: the machine would reread or drop it, a path no run takes.
    const declared = pb.workflow.find((s) => s.step === step)!;
    for (const [i, o] of list.entries()) {
      const why = isOutcome(o) ? inapplicableOutcome(declared, o) : undefined;
      if (why !== undefined) throw new Error(`${field(i)}: ${step} cannot end "${o}": ${why}`);
    }
  }
}
