import { latestCatalogHeads } from '../src/db/catalog.repo.ts';
import { allocateExecutionIds } from '../src/db/execution.repo.ts';
import type { Queryable } from '../src/db/queryable.ts';
import { ServiceError } from '../src/errors.ts';
import type { EngineDeps } from './engine-deps.ts';
import { ExecutionUnit } from './execution-unit.ts';
import type { CompiledPlaybook } from './playbook-cache.ts';

/** What to start: a compiled catalog entry, or the newest version at a path (looked up in the batch). */
export type StartInput = ({ compiled: CompiledPlaybook } | { path: string }) & { payload: Record<string, unknown> };
export type Started = { executionId: number; catalogId: number; path: string; commandsGenerated: number };

async function resolve(deps: EngineDeps, q: Queryable, inputs: StartInput[]): Promise<(CompiledPlaybook | ServiceError)[]> {
  const paths = inputs.flatMap((i) => ('path' in i ? [i.path] : []));
  const heads = paths.length ? await latestCatalogHeads(q, paths) : new Map();
  const out: (CompiledPlaybook | ServiceError)[] = [];
  for (const i of inputs) {
    if ('compiled' in i) out.push(i.compiled);
    else {
      const head = heads.get(i.path);
      out.push(head ? await deps.cache.get(q, head.catalog_id) : new ServiceError('not_found', `playbook ${i.path} not found`));
    }
  }
  return out;
}

/**
 * Starts executions in one transaction: per execution `execution.started`, the first step's
 * events and command rows, projection and snapshot; ids come from one query. Workers hear of the
 * commands after commit. An input whose path is unknown gets a ServiceError in its place.
 */
export async function startExecutions(deps: EngineDeps, inputs: StartInput[]): Promise<(Started | ServiceError)[]> {
  const out = await deps.db.tx(async (q) => {
    const compiled = await resolve(deps, q, inputs);
    const ids = await allocateExecutionIds(q, compiled.filter((c) => !(c instanceof ServiceError)).length);
    const unit = new ExecutionUnit(q, deps.cache, deps.snapshots);
    const results: (Started | ServiceError)[] = [];
    for (let i = 0; i < inputs.length; i++) {
      const c = compiled[i];
      if (c instanceof ServiceError) {
        results.push(c);
        continue;
      }
      const before = unit.commandsGenerated;
      const executionId = await unit.start({
        compiled: c,
        executionId: ids.shift(),
        workload: { ...c.playbook.workload, ...inputs[i].payload },
        args: inputs[i].payload,
      });
      results.push({ executionId, catalogId: c.catalogId, path: c.path, commandsGenerated: unit.commandsGenerated - before });
    }
    await unit.flush();
    return { results, finished: unit.finished, commands: unit.commandsGenerated, unit };
  });
  out.unit.publish();
  deps.metrics.executionsStarted.inc(out.results.filter((r) => !(r instanceof ServiceError)).length);
  deps.metrics.commandsIssued.inc(out.commands);
  for (const f of out.finished) deps.metrics.executionsFinished.inc({ status: f.status });
  return out.results;
}

const MAX_STARTS_PER_TRANSACTION = 128;

/**
 * Group commit for starts: requests arriving while a start transaction is in flight go together
 * in the next one, so a burst costs a few commits instead of one per execution. A lone request
 * starts at once. A failing batch is retried one request at a time, so one bad request cannot
 * fail the others.
 */
export class StartBatcher {
  readonly #deps: EngineDeps;
  #queue: { input: StartInput; ok: (s: Started) => void; fail: (e: unknown) => void }[] = [];
  #busy = false;

  constructor(deps: EngineDeps) {
    this.#deps = deps;
  }

  start(input: StartInput): Promise<Started> {
    return new Promise((ok, fail) => {
      this.#queue.push({ input, ok, fail });
      void this.#pump();
    });
  }

  async #pump(): Promise<void> {
    if (this.#busy) return;
    this.#busy = true;
    try {
      while (this.#queue.length) {
        const batch = this.#queue.splice(0, MAX_STARTS_PER_TRANSACTION);
        try {
          const results = await startExecutions(this.#deps, batch.map((b) => b.input));
          batch.forEach((b, i) => {
            const r = results[i];
            if (r instanceof ServiceError) b.fail(r);
            else b.ok(r);
          });
        } catch (err) {
          if (batch.length === 1) batch[0].fail(err);
          else {
            for (const b of batch) {
              await startExecutions(this.#deps, [b.input]).then(
                ([r]) => (r instanceof ServiceError ? b.fail(r) : b.ok(r)),
                (e) => b.fail(e),
              );
            }
          }
        }
      }
    } finally {
      this.#busy = false;
    }
  }
}
