import * as v from 'valibot';
import {
  PlaybookDocumentSchema,
  type ArcDocument,
  type KeychainDefinition,
  type LoopSpec,
  type NextDocument,
  type PlaybookDocument,
  type PlaybookMetadata,
  type RetrySpec,
  type ConcurrencySpec,
  type DebounceSpec,
  type StepDocument,
  type TaskDocument,
  type WaitDocument,
} from './playbook.schema.ts';
import type { Role } from '../auth/roles.ts';
import { durationMs } from './duration.ts';
import { loadYamlDocument } from './load-yaml-document.ts';
import { waitProblems } from './wait-problems.ts';
import { flowProblems } from './flow-problems.ts';
import { referenceProblems, type Problem } from './reference-problems.ts';
import { shellEnvProblems } from './shell-env-code.ts';
import { templateProblems } from './template-problems.ts';
import { templateRefs } from './template-refs.ts';
import { staticReferenceProblems } from './static-reference-problems.ts';
import { grantedAuthProblems } from './granted-auth-problems.ts';
import { unknownFields } from './unknown-field-message.ts';
import { describeIssue, formatPath } from './issue-text.ts';
import { placeProblems } from './yaml-positions.ts';
import { shadowedWorkloadWarnings } from './shadowed-workload-warnings.ts';
import { isObject } from '../objects.ts';
import { checkInputs, inputDefaults } from './check-inputs.ts';
import type { Inputs } from './inputs.schema.ts';
import type { TriggerSpec } from '../triggers/trigger.schema.ts';
import { triggerProblems } from '../triggers/trigger-problems.ts';
import { TEMPLATE_MARK } from './template-ast.ts';
import { childPath } from './render.ts';

export type { KeychainDefinition, LoopSpec, RetrySpec, PlaybookMetadata, TaskKind } from './playbook.schema.ts';

export type { Problem } from './reference-problems.ts';

export type Arc = { step: string; when?: string; set?: Record<string, unknown> };
export type NextSpec = { mode: 'exclusive' | 'inclusive'; arcs: Arc[] };

type Normalize<T> = T extends unknown ? T & { name: string; retry: RetrySpec } : never;
/** A task with its name filled (`task_<index>` when absent) and retry defaults applied. */
export type NormalizedTask = Normalize<TaskDocument>;

/**
 * What a waiting step waits for: a timer (`forMs` after the step starts, or the time `until`
 * renders to) or a signal (timing out after `timeoutMs`; only `roles` may send it when set;
 * kept when it comes before the step waits, with `buffer`).
 */
export type WaitSpec =
  | { kind: 'timer'; forMs?: number; until?: string }
  | { kind: 'signal'; signal: string; timeoutMs: number | null; roles: Role[] | null; buffer: boolean };

export type NormalizedStep = {
  step: string;
  desc?: string;
  tasks: NormalizedTask[];
  loop?: LoopSpec;
  wait?: WaitSpec;
  next: NextSpec;
};

export type NormalizedPlaybook = {
  apiVersion: string;
  kind: 'Playbook';
  metadata: PlaybookMetadata;
  /** The `workload:` block with the inputs' defaults over it. */
  workload: Record<string, unknown>;
  /** The `inputs:` block, when declared: what a start's merged workload must pass (check-inputs.ts). */
  inputs?: Inputs;
  keychain: KeychainDefinition[];
  /** The `triggers:` block, defaults applied (empty when none). */
  triggers: TriggerSpec[];
  workflow: NormalizedStep[];
  /** The `examples:` block: a sample result per step name, used only by simulation. */
  examples?: Record<string, unknown>;
  /** Name of the first step to run: `start` when present, else the first step. */
  entry: string;
  /** Flow control: at most `limit` executions at once per rendered `key` (src/flow/admission-of.ts). */
  concurrency?: ConcurrencySpec;
  /** Claimed first: 0..9 (a start may set its own). */
  priority: number;
  /** Starts with one rendered key within `seconds` make one execution, with the last payload. */
  debounce?: DebounceSpec;
};

/** `warnings`: what is certain to be wrong and stored anyway, each `path: message` (registration answers them). */
export type ParseResult = { ok: true; playbook: NormalizedPlaybook; warnings: string[] } | { ok: false; problems: Problem[] };

/**
 * Parses playbook YAML text, validates it and normalizes it. Never throws: every problem found
 * (shape, the rules relating parts to each other, templates that cannot render) is returned at
 * once with its path. `catalogPath`, a path the request gives, stands in for a missing metadata.path.
 */
export function parsePlaybook(text: string, catalogPath?: string): ParseResult {
  const result = findProblems(text, catalogPath);
  if (result.ok) return result;
  // Every problem carries where it is in the text (DESIGN.md "Authoring"); a YAML error, its mark.
  return { ok: false, problems: placeProblems(text, result.problems) };
}

function findProblems(text: string, catalogPath: string | undefined): ParseResult {
  const loaded = loadYamlDocument(text);
  if (!loaded.ok) return loaded;
  const { raw } = loaded;
  if (!isObject(raw)) {
    return { ok: false, problems: [{ path: '$', message: 'the document must be a mapping' }] };
  }
  // POST /api/catalog/playbook takes the path beside the content (the spec's request): a document
  // without its own metadata.path is stored there.
  if (catalogPath !== undefined && isObject(raw.metadata) && raw.metadata.path === undefined) raw.metadata = { ...raw.metadata, path: catalogPath };
  const parsed = v.safeParse(PlaybookDocumentSchema, raw);
  const shapeProblems = parsed.success
    ? []
    : parsed.issues.flatMap((issue) =>
        issue.expected === 'never' ? unknownFields(PlaybookDocumentSchema, issue.path ?? []).map((u) => ({ path: formatPath(u.path), message: u.message })) : [{ path: formatPath(issue.path), message: describeIssue(issue) }],
      );
  // The inputs' checks need their blocks valid, not the whole document: they report beside its other problems.
  const withInputs = parsed.success ? parsed.output : parsedPart(InputsPartSchema, raw);
  const withTriggers = parsed.success ? parsed.output : parsedPart(TriggerInputsPartSchema, raw);
  const references = staticReferenceProblems(raw);
  const problems = [
    ...shapeProblems,
    ...(withInputs ? workloadDefaultProblems(withInputs) : []),
    ...(withTriggers ? triggerInputProblems(withTriggers) : []),
    ...referenceProblems(raw),
    ...templateProblems(raw),
    ...references.problems,
    ...grantedAuthProblems(raw),
    ...triggerProblems(raw),
    ...waitProblems(raw),
    ...flowProblems(raw),
    ...shellEnvProblems(raw),
  ];
  if (!parsed.success || problems.length > 0) return { ok: false, problems };
  return { ok: true, playbook: normalize(parsed.output), warnings: [...shadowedWorkloadWarnings(parsed.output), ...references.warnings.map((w) => `${w.path}: ${w.message}`)] };
}

/** The blocks the inputs' checks read, each as the document schema takes it; the rest of the document is not looked at. */
const InputsPartSchema = v.object({ workload: PlaybookDocumentSchema.entries.workload, inputs: PlaybookDocumentSchema.entries.inputs });
const TriggerInputsPartSchema = v.object({ ...InputsPartSchema.entries, triggers: PlaybookDocumentSchema.entries.triggers });

/** `part` of a document whose whole failed its schema, when that part alone is valid. */
function parsedPart<S extends typeof InputsPartSchema | typeof TriggerInputsPartSchema>(part: S, raw: unknown): v.InferOutput<S> | undefined {
  const r = v.safeParse(part, raw);
  return r.success ? r.output : undefined;
}

/**
 * The `workload:` values that fail their declared input (type, enum): every start that does not
 * give that name would be refused, so the playbook is (an input's own default is checked with it).
 */
function workloadDefaultProblems(doc: Pick<PlaybookDocument, 'workload' | 'inputs'>): Problem[] {
  if (!doc.inputs || !doc.workload) return [];
  const given = Object.fromEntries(Object.entries(doc.workload).filter(([name]) => doc.inputs?.[name]?.default === undefined));
  return checkInputs(doc.inputs, given)
    .filter((p) => Object.hasOwn(given, p.path.slice('workload.'.length)))
    .map((p) => ({ path: p.path, message: `${p.message} (the input declared at inputs.${p.path.slice('workload.'.length)})` }));
}

/**
 * A trigger whose every fire the playbook's `inputs:` would refuse: its start's workload is the
 * `workload:` block, the defaults and the trigger's payload, so a required input none of them
 * holds, or a literal payload value not of its input's type or enum, is certain at registration.
 * A templated value is known only once rendered (the start checks it).
 */
function triggerInputProblems(doc: Pick<PlaybookDocument, 'workload' | 'inputs' | 'triggers'>): Problem[] {
  if (!doc.inputs) return [];
  const base = { ...doc.workload, ...inputDefaults(doc.inputs) };
  return (doc.triggers ?? []).flatMap((trigger, i) => {
    const payload = trigger.payload ?? {};
    const literal = Object.fromEntries(Object.entries(payload).filter(([, value]) => !(typeof value === 'string' && TEMPLATE_MARK.test(value))));
    const templated = Object.keys(payload).filter((name) => !Object.hasOwn(literal, name));
    return checkInputs(doc.inputs, { ...base, ...payload, ...literal })
      .filter((p) => !templated.includes(p.path.slice('workload.'.length)))
      .map((p) => {
        const name = p.path.slice('workload.'.length);
        return Object.hasOwn(payload, name)
          ? { path: childPath(`triggers[${i}].payload`, name), message: `${p.message} (the input declared at inputs.${name}): every fire would be refused` }
          : { path: `triggers[${i}].payload`, message: `${p.path} ${p.message} (the input declared at inputs.${name}) and the payload does not give it: every fire would be refused` };
      });
  });
}

/**
 * Names of keychain entries a task references (`keychain.<name>` or `keychain['<name>']` in any of
 * its templates), in order of first use, so a worker resolves only those.
 */
export function referencedKeychainNames(task: NormalizedTask): string[] {
  return [...templateRefs(task).keychain];
}

/** Where an execution begins: the step named `start`, else the first (of a non-empty workflow). */
export function entryStep(steps: readonly string[]): string {
  return steps.includes('start') ? 'start' : steps[0];
}

function normalize(doc: PlaybookDocument): NormalizedPlaybook {
  const workflow = doc.workflow.map(normalizeStep);
  const entry = entryStep(workflow.map((step) => step.step));
  return {
    apiVersion: doc.apiVersion,
    kind: doc.kind,
    metadata: doc.metadata,
    workload: { ...doc.workload, ...inputDefaults(doc.inputs) },
    ...(doc.inputs === undefined ? {} : { inputs: doc.inputs }),
    keychain: doc.keychain,
    triggers: doc.triggers,
    workflow,
    ...(doc.examples === undefined ? {} : { examples: doc.examples }),
    entry,
    ...(doc.concurrency === undefined ? {} : { concurrency: doc.concurrency }),
    priority: doc.priority,
    ...(doc.debounce === undefined ? {} : { debounce: doc.debounce }),
  };
}

function normalizeStep(step: StepDocument): NormalizedStep {
  const tools = step.tool === undefined ? [] : Array.isArray(step.tool) ? step.tool : [step.tool];
  const tasks = tools.map(
    (task, index): NormalizedTask => ({
      ...task,
      name: task.name ?? `task_${index}`,
      retry: task.retry ?? { attempts: 1, delay_seconds: 0, backoff: 1 },
    }),
  );
  const normalized: NormalizedStep = { step: step.step, tasks, next: normalizeNext(step.next) };
  if (step.desc !== undefined) normalized.desc = step.desc;
  if (step.loop !== undefined) normalized.loop = step.loop;
  if (step.wait !== undefined) normalized.wait = normalizeWait(step.wait);
  return normalized;
}

function normalizeWait(wait: WaitDocument): WaitSpec {
  if (wait.signal !== undefined) {
    return { kind: 'signal', signal: wait.signal, timeoutMs: wait.timeout === undefined ? null : durationMs(wait.timeout)!, roles: wait.approval?.roles ?? null, buffer: wait.buffer ?? false };
  }
  return wait.until !== undefined ? { kind: 'timer', until: wait.until } : { kind: 'timer', forMs: durationMs(wait.for)! };
}

function normalizeNext(next: NextDocument | undefined): NextSpec {
  if (next === undefined) return { mode: 'exclusive', arcs: [] };
  const toArc = (raw: string | ArcDocument): Arc => (typeof raw === 'string' ? { step: raw } : { ...raw });
  if (typeof next === 'string') return { mode: 'exclusive', arcs: [toArc(next)] };
  if (Array.isArray(next)) return { mode: 'exclusive', arcs: next.map(toArc) };
  return { mode: next.mode, arcs: next.arcs.map(toArc) };
}
