import type { CatalogHead } from '../src/db/catalog.repo.ts';
import type { Identity } from '../src/auth/identity.ts';
import type { Queryable } from '../src/db/queryable.ts';
import { ServiceError } from '../src/errors.ts';
import { invalidInputs } from '../src/dsl/invalid-inputs.ts';
import { admissionOf } from '../src/flow/admission-of.ts';
import { undebounced } from '../src/flow/undebounced.ts';
import { TemplateError } from '../src/dsl/render.ts';
import { extendDebounce, isDebounceWindowTaken, openDebounceWindowCatalog, type AdmitKey } from '../src/db/flow.repo.ts';
import { FlowKeyError } from '../machines/flow-key.ts';
import type { Admission } from '../machines/execution/types.ts';
import { withholdAccessTokens } from './access-tokens.ts';
import type { EngineDeps } from './engine-deps.ts';
import { GroupCommit } from './group-commit.ts';
import { admitKeyOf, roomKey } from './key-rooms.ts';
import { runUnit } from './execution-unit.ts';
import { publishCommitted } from './publish.ts';
import type { CompiledPlaybook } from './playbook-cache.ts';
import type { StartRequest } from './unit-types.ts';
import { StartPreludeCache } from './start-prelude-cache.ts';

/**
 * What to start: a compiled catalog entry, or the newest version at a path (looked up in the
 * batch). `origin`: recorded in the `execution.started` context beside the input (e.g. `resumed_from`).
 */
export type StartInput = ({ compiled: CompiledPlaybook } | { path: string }) & {
  payload: Record<string, unknown>;
  requestedBy?: Identity;
  idempotency?: StartKey;
  origin?: Record<string, unknown>;
  /**
   * The payload is an earlier execution's own (a retry's, a resume's): an `access_token` that is a
   * handle is that execution's, passed on. From anywhere else a handle is text like any token and
   * is sealed again: a handle seen in another execution's events must not reach its secret.
   */
  ownHandles?: true;
  /** A retry's recorded step outcomes (machines/execution/types.ts ExecutionInput.replay). */
  replay?: StartRequest['replay'];
  /** Signals the execution it succeeds had kept and not given to a step (ExecutionInput.signals). */
  signals?: StartRequest['signals'];
  /**
   * It succeeds an earlier execution (a retry, auto-resume's restart): it runs as that one's own,
   * so it neither joins a debounce window (another execution would take its payload, and its
   * replay and its link to the one it succeeds would be lost) nor opens one. It still waits on its
   * concurrency key as any start.
   */
  successor?: true;
  /** Its own priority (0..9), over the playbook's. */
  priority?: number;
  /**
   * The kind a start route asked for (POST /api/run/playbook and MCP lifecycle actions:
   * `playbook`; POST /api/execute: its `resource_kind`), checked against the version started (see
   * kindRefusal). Absent for the engine's own starts (triggers, retries, resumes).
   */
  as?: 'playbook' | 'agent';
};

/**
 * Why a start route may not start `compiled` as `as` (spec "Errors"), or undefined: `agent` starts
 * only a version registered as an agent (404 `Executable catalog entry not found`), and an agent
 * (registered as one, or marked `metadata.agent`) starts only as `agent` (422, naming resource_kind).
 */
export function kindRefusal(compiled: Pick<CompiledPlaybook, 'path' | 'kind' | 'playbook'>, as: 'playbook' | 'agent'): ServiceError | undefined {
  if (as === 'agent' && compiled.kind !== 'agent') return new ServiceError('not_found', 'Executable catalog entry not found');
  const agent = compiled.kind === 'agent' || compiled.playbook.metadata.agent === true;
  if (agent && as !== 'agent') {
    // Only marked, it is no agent to POST /api/execute either (404 above): the way is to register it as one.
    const how =
      compiled.kind === 'agent'
        ? 'start it with POST /api/execute and resource_kind "agent"'
        : 'it is marked metadata.agent but was registered as a playbook: register it as an agent (POST /api/catalog/register with resource_type "agent"), then start it with POST /api/execute and resource_kind "agent"';
    return new ServiceError('unprocessable', { message: `${compiled.path} is an agent playbook: ${how}`, errors: ['resource_kind: required for agent playbooks'] });
  }
  return undefined;
}
/**
 * Starts inside a transaction with writes of the caller's (trigger fires): `begin` first (taking
 * the rows the starts depend on), `beforeCommit` beside the starts, knowing each input's result;
 * throwing from either rolls all back.
 */
export type StartTx = {
  /** Runs first in each attempt's transaction; may answer which inputs to start (by index): the others are answered with a `conflict`. */
  begin?: (q: Queryable) => Promise<((index: number) => boolean) | void>;
  beforeCommit: (q: Queryable, results: readonly (Started | ServiceError)[]) => Promise<void>;
};
/** `debounced`: the start joined an open debounce window: its execution (queued) runs with this start's payload unless a later one comes. */
export type Started = { executionId: number; catalogId: number; path: string; commandsGenerated: number; debounced?: boolean };
/** A start's idempotency key, stored with the execution together with the answer `answer` makes for it. */
export type StartKey = { scope: string; key: string; requestHash: string; statusCode: number; answer: (started: Started) => unknown };

/**
 * Starts executions: per execution `execution.started`, the first step's events and command
 * rows and the projection, all written by ONE statement, which is atomic by itself (no
 * transaction). The catalog heads and ids come from `prelude`: from memory, or read in one more
 * round trip first. A head from memory that turns out stale fails the write's guard; the batch
 * is then redone with heads read afresh. Workers hear of the commands at its commit. An input
 * whose path is unknown gets a ServiceError in its place. An input's idempotency key is written
 * by the same statement; a key stored already fails the whole write (see isIdempotencyKeyTaken).
 * A payload's `access_token` is sealed first, once for all attempts (actors/access-tokens.ts).
 */
export async function startExecutions(deps: EngineDeps, given: readonly StartInput[], prelude = new StartPreludeCache(), tx?: StartTx): Promise<(Started | ServiceError)[]> {
  // Every start passes here (routes, triggers, webhooks, lifecycle actions, retries, resumes), so
  // none can forget the token: sealed before a debounce window or the fold sees the payload. It is
  // an INSERT (I/O) and compileStarts is redone per attempt: here it is written once. A start
  // without a token costs nothing more.
  const inputs = await withholdAccessTokens(deps, given);
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOnce(deps, inputs, prelude, tx);
    } catch (err) {
      // Another start opened the debounce window this one would have: it joins that one now.
      if (attempt < MAX_DEBOUNCE_ATTEMPTS && isDebounceWindowTaken(err)) continue;
      throw err;
    }
  }
}

/** Starts racing to open one debounce window: the losers' units are written again (joining it). */
const MAX_DEBOUNCE_ATTEMPTS = 4;

async function startOnce(deps: EngineDeps, inputs: readonly StartInput[], prelude: StartPreludeCache, tx?: StartTx): Promise<(Started | ServiceError)[]> {
  const q = deps.db;
  const paths = inputs.flatMap((i) => ('path' in i ? [i.path] : []));
  let taken = await prelude.take(q, paths, inputs.length);
  let compiledOf = await compileStarts(deps, inputs, taken.heads);
  // A start of an open debounce window's burst replaces its payload and starts nothing (read
  // first: the window it finds is the one its execution has, or none and it opens one). Its
  // workload is the one that runs, so its own concurrency key and priority go with it. Taken in
  // the unit's transaction, after the caller's `begin`: a start that writes nothing (a fire key
  // stored already, a trigger paused meanwhile, an idempotency key taken) moves no window.
  let joined = new Map<number, Started>();
  const joinWindows = async (q: Queryable, keep: ((index: number) => boolean) | void) => {
    joined = new Map();
    for (const [i, c] of compiledOf.entries()) {
      const a = !(c instanceof ServiceError) && c.admission;
      if (!a || !a.debounce || c instanceof ServiceError || (keep && !keep(i))) continue;
      // Its payload runs in the version the window opened with: it must fit that version's inputs
      // too, and waits on that version's concurrency limit (its key rendered from this payload).
      const runs = await openDebounceWindowCatalog(q, c.compiled.path, a.debounce.key);
      const as = runs !== null && runs !== c.compiled.catalogId ? prepareStart(await deps.cache.get(deps.db, runs), inputs[i]) : c;
      if (as instanceof ServiceError) {
        compiledOf[i] = as;
        continue;
      }
      const w = as.admission ?? a;
      const priority = inputs[i].priority ?? as.compiled.playbook.priority;
      const window = await extendDebounce(q, c.compiled.path, a.debounce.key, { args: inputs[i].payload, seconds: a.debounce.seconds, limit: w.limit, key: w.key, capacity: w.capacity, priority });
      if (window === null) continue;
      // Its catalog id: the version the execution runs, which a version registered since the window opened is not.
      joined.set(i, { ...window, path: c.compiled.path, commandsGenerated: 0, debounced: true });
      // Its key has an execution queued now (the key it moved from is read again once its memory is old).
      if (w.limit !== null && w.key !== null) deps.rooms.queued(w.limit, w.key);
    }
  };
  let keep: ((index: number) => boolean) | void = undefined;
  // Debounced starts take a transaction of their own when the caller brings none (the window's
  // extension and the unit's write commit together); other starts stay one statement.
  const debounced = compiledOf.some((c) => !(c instanceof ServiceError) && c.admission?.debounce);
  const unitTx: { begin: (q: Queryable) => Promise<void>; beforeCommit?: StartTx['beforeCommit'] } | undefined =
    tx || debounced
      ? {
          begin: async (q: Queryable) => {
            keep = await tx?.begin?.(q);
            await joinWindows(q, keep);
          },
          ...(tx ? { beforeCommit: tx.beforeCommit } : {}),
        }
      : undefined;
  // Idle claimers of this server take the commands the starts issue, in the same write.
  const done = await deps.parked.offer(
    (parked) =>
      runUnit<(Started | ServiceError)[]>(deps, {
        executionIds: [],
        claims: parked,
        ...(unitTx ? { tx: unitTx } : {}),
        starting: () => compiledOf.flatMap((c) => (c instanceof ServiceError ? [] : [c.compiled])),
        startKeys: () => startKeysOf(compiledOf),
        // A head taken from memory was stale (another server registered a version): the unit runs again with heads read afresh.
        onMoved: async () => {
          prelude.forgetHeads();
          // Or a key's room was taken by another server: read again.
          deps.rooms.forget(startKeysOf(compiledOf));
          taken = await prelude.take(q, paths, inputs.length);
          compiledOf = await compileStarts(deps, inputs, taken.heads);
        },
        fold: (fold) => {
          fold.checkHeads(taken.cached.map((h) => ({ path: h.path, version: h.version })));
          const results: (Started | ServiceError)[] = [];
          const preparedOf = (i: number) => (keep && !keep(i) ? new ServiceError('conflict', 'not started: its transaction did not take what it depends on') : compiledOf[i]);
          // Starts of this batch that open one debounce window (a trigger's burst, a backfill, API
          // starts gathered while a batch was written) make one execution, as they would one after
          // another: the first's, run with the last's payload, key and priority; the others join it.
          const lastOfWindow = new Map<string, number>();
          for (const i of inputs.keys()) {
            const w = joined.has(i) ? undefined : windowOf(preparedOf(i));
            if (w !== undefined) lastOfWindow.set(w, i);
          }
          const opened = new Map<string, Started>();
          for (const [i, input] of inputs.entries()) {
            const prepared = preparedOf(i);
            if (prepared instanceof ServiceError) {
              results.push(prepared);
              continue;
            }
            const keepKey = (started: Started) => {
              const k = input.idempotency;
              if (k) fold.keepIdempotencyKey({ scope: k.scope, key: k.key, request_hash: k.requestHash, execution_id: started.executionId, status_code: k.statusCode, response: JSON.stringify(k.answer(started)) });
            };
            // A start that joined a window keeps its key too, with its answer (the window's
            // execution): sent again after that execution ran, it is answered so, and does not
            // open a window of its own to run its payload again.
            const debounced = joined.get(i);
            if (debounced) {
              results.push(debounced);
              keepKey(debounced);
              continue;
            }
            const window = joined.has(i) ? undefined : windowOf(prepared);
            const opener = window === undefined ? undefined : opened.get(window);
            if (opener) {
              const joins = { ...opener, commandsGenerated: 0, debounced: true };
              results.push(joins);
              keepKey(joins);
              continue;
            }
            // The burst's last start of this batch gives the payload, key and priority (its own prepared, never an error).
            const lastIndex = window === undefined ? i : (lastOfWindow.get(window) ?? i);
            const last = inputs[lastIndex];
            const lastPrepared = compiledOf[lastIndex];
            const admission = lastPrepared instanceof ServiceError ? prepared.admission : lastPrepared.admission;
            const { compiled } = prepared;
            const before = fold.commandsIssued;
            const executionId = fold.start({
              compiled,
              executionId: taken.ids[i],
              workload: { ...compiled.playbook.workload, ...last.payload },
              args: last.payload,
              requestedBy: input.requestedBy,
              origin: input.origin,
              replay: input.replay,
              ...(input.signals ? { signals: input.signals } : {}),
              ...(last.priority !== undefined ? { priority: last.priority } : {}),
              ...(admission ? { admission } : {}),
            });
            const started = { executionId, catalogId: compiled.catalogId, path: compiled.path, commandsGenerated: fold.commandsIssued - before };
            if (window !== undefined) opened.set(window, started);
            results.push(started);
            keepKey(started);
          }
          return results;
        },
      }),
    (done) => publishCommitted(deps, done),
  );
  const results = done.value;
  deps.metrics.commandsIssued.inc(done.folded.rows.commands.length);
  for (const f of done.folded.rows.finished) deps.metrics.executionsFinished.inc({ status: f.status });
  deps.scheduleClock?.ended(done.folded.rows.finished);
  return results;
}

/** A start ready to fold: its compiled playbook and what it waits for before it runs (flow control). */
type Prepared = { compiled: CompiledPlaybook; admission: Admission | undefined };

/** The debounce window a start would open (its path and rendered key), or undefined when it is not debounced. */
function windowOf(p: Prepared | ServiceError): string | undefined {
  if (p instanceof ServiceError || !p.admission?.debounce) return undefined;
  return `${p.compiled.path}\u0000${p.admission.debounce.key}`;
}

/** The concurrency keys (once each) of starts that may be admitted at once: of a limit, not debounced. */
function startKeysOf(prepared: readonly (Prepared | ServiceError)[]): AdmitKey[] {
  const keys = new Map<string, AdmitKey>();
  for (const p of prepared) {
    const k = !(p instanceof ServiceError) && p.admission && admitKeyOf(p.admission);
    if (k) keys.set(roomKey(k.limit, k.key), k);
  }
  return [...keys.values()];
}

/**
 * What each start folds with, read before the fold (compiled machines are cached per version),
 * with its admission's keys rendered; a refusal in place of a start that cannot be.
 */
async function compileStarts(deps: EngineDeps, inputs: readonly StartInput[], heads: ReadonlyMap<string, CatalogHead>): Promise<(Prepared | ServiceError)[]> {
  const compiledOf: (CompiledPlaybook | ServiceError)[] = [];
  for (const input of inputs) {
    if ('compiled' in input) {
      compiledOf.push((input.as && kindRefusal(input.compiled, input.as)) || input.compiled);
      continue;
    }
    const head = heads.get(input.path);
    if (!head) compiledOf.push(new ServiceError('not_found', `playbook ${input.path} not found`));
    // An MCP server document shares the catalog but is not a playbook: it is never run.
    else if (head.kind === 'mcp') compiledOf.push(new ServiceError('unprocessable', `${input.path} is an MCP server document (kind Mcp), not a playbook`));
    else {
      // The newest version decides whether a start route may start it (the head the fold checks).
      const compiled = await deps.cache.get(deps.db, head.catalog_id);
      compiledOf.push((input.as && kindRefusal(compiled, input.as)) || compiled);
    }
  }
  // A workload that fails the playbook's inputs starts nothing (the 422 names each field); nor does
  // one whose concurrency or debounce key cannot be rendered from it.
  return compiledOf.map((compiled, i) => (compiled instanceof ServiceError ? compiled : prepareStart(compiled, inputs[i])));
}

/** `input` ready to fold as a start of `compiled`, or why it may not start (its inputs, its flow keys). */
function prepareStart(compiled: CompiledPlaybook, input: StartInput): Prepared | ServiceError {
  const payload = input.payload;
  const refused = invalidInputs(compiled.playbook, payload);
  if (refused) return refused;
  try {
    const admission = admissionOf(compiled.playbook, compiled.path, { ...compiled.playbook.workload, ...payload }, payload);
    return { compiled, admission: input.successor ? undebounced(admission) : admission };
  } catch (err) {
    const field = err instanceof FlowKeyError ? err.field : err instanceof TemplateError ? err.field : 'key';
    const message = err instanceof Error ? err.message : String(err);
    const detail = { message: `${compiled.path}: ${message}`, errors: [`${field}: ${message}`] };
    // A key too long says so by its code, as a task's limit key does in its outcome.
    return err instanceof FlowKeyError ? new ServiceError(err.code, { code: err.code, ...detail }) : new ServiceError('unprocessable', detail);
  }
}

const MAX_STARTS_PER_TRANSACTION = 128;
// One batch in flight: requests gather while it is written (one round trip; two when heads or
// ids must be read first), so a burst costs few, large writes; measured, a second batch in
// flight cost more CPU per start than it saved.
const MAX_START_BATCHES_IN_FLIGHT = 1;

/** Starts executions with group commit (see GroupCommit): a burst of requests costs a few writes. */
export class StartBatcher {
  readonly #group: GroupCommit<StartInput, Started>;

  constructor(deps: EngineDeps) {
    const prelude = new StartPreludeCache();
    this.#group = new GroupCommit<StartInput, Started>({
      maxInFlight: MAX_START_BATCHES_IN_FLIGHT,
      weight: () => 1,
      maxWeight: MAX_STARTS_PER_TRANSACTION,
      run: (inputs) => startExecutions(deps, inputs, prelude),
    });
  }

  start(input: StartInput): Promise<Started> {
    return this.#group.submit(input);
  }
}
