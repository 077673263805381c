import type { CommandRow } from '../src/db/command.repo.ts';
import type { EngineDeps } from './engine-deps.ts';
import { routeEvents, type Claim, type EventResult, type RoutedEvent } from './route-events.ts';

/** One worker report: its events, and how many next commands it wants (claim-ahead). */
export type Report = { events: RoutedEvent[]; claim?: Claim };
export type ReportOutcome = { results: EventResult[]; commands_generated: number; claimed: CommandRow[] };

type Pending = { report: Report; ok: (o: ReportOutcome) => void; fail: (e: unknown) => void };

const MAX_EVENTS_PER_TRANSACTION = 2_000;
// More than one routing transaction in flight: a batch waiting on a lock (an execution another
// server is routing) must not hold up every other worker's report on this server.
export const REPORT_BATCHES_IN_FLIGHT = 3;

/**
 * Group commit for worker reports: reports arriving while a routing transaction is in flight go
 * together in the next one (one lock-and-load, one write, one commit for all), and its claim-
 * ahead serves every reporting worker. A lone report is routed at once. A batch that fails is
 * routed again one report at a time, so one bad report cannot fail the others.
 */
export class ReportBatcher {
  readonly #deps: EngineDeps;
  #queue: Pending[] = [];
  #inFlight = 0;

  constructor(deps: EngineDeps) {
    this.#deps = deps;
  }

  route(report: Report): Promise<ReportOutcome> {
    return new Promise((ok, fail) => {
      this.#queue.push({ report, ok, fail });
      this.#pump();
    });
  }

  #pump(): void {
    while (this.#inFlight < REPORT_BATCHES_IN_FLIGHT && this.#queue.length) {
      const batch = this.#take();
      this.#inFlight++;
      void this.#run(batch).finally(() => {
        this.#inFlight--;
        this.#pump();
      });
    }
  }

  async #run(batch: Pending[]): Promise<void> {
    if (batch.length === 1) return this.#routeOne(batch[0]);
    try {
      const outcomes = await routeTogether(this.#deps, batch.map((p) => p.report));
      batch.forEach((p, i) => p.ok(outcomes[i]));
    } catch {
      for (const p of batch) await this.#routeOne(p);
    }
  }

  #take(): Pending[] {
    const batch: Pending[] = [];
    let events = 0;
    while (this.#queue.length && (batch.length === 0 || events + this.#queue[0].report.events.length <= MAX_EVENTS_PER_TRANSACTION)) {
      const p = this.#queue.shift()!;
      events += p.report.events.length;
      batch.push(p);
    }
    return batch;
  }

  async #routeOne(p: Pending): Promise<void> {
    try {
      const out = await routeEvents(this.#deps, p.report.events, p.report.claim ? { claims: [p.report.claim] } : {});
      p.ok(out);
    } catch (err) {
      p.fail(err);
    }
  }
}

/** Routes several reports in one transaction and hands each its results and claimed commands. */
async function routeTogether(deps: EngineDeps, reports: Report[]): Promise<ReportOutcome[]> {
  // One claim per worker: two reports of one worker ask together.
  const wanted = new Map<string, number>();
  for (const r of reports) if (r.claim && r.claim.max > 0) wanted.set(r.claim.workerId, (wanted.get(r.claim.workerId) ?? 0) + r.claim.max);
  const out = await routeEvents(deps, reports.flatMap((r) => r.events), { claims: [...wanted].map(([workerId, max]) => ({ workerId, max })) });
  const byWorker = new Map<string, CommandRow[]>();
  for (const c of out.claimed) {
    const list = byWorker.get(c.worker_id ?? '') ?? [];
    list.push(c);
    byWorker.set(c.worker_id ?? '', list);
  }
  let at = 0;
  return reports.map((r) => {
    const results = out.results.slice(at, at + r.events.length);
    at += r.events.length;
    const claimed = r.claim ? (byWorker.get(r.claim.workerId) ?? []).splice(0, r.claim.max) : [];
    // commands_generated is the transaction's: it is shared by the reports routed in it.
    return { results, commands_generated: out.commands_generated, claimed };
  });
}
