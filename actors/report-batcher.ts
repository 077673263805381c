import type { CommandRow } from '../src/db/command.repo.ts';
import type { EngineDeps } from './engine-deps.ts';
import { GroupCommit } from './group-commit.ts';
import { routeEvents, type Claim, type EventResult, type RoutedEvent } from './route-events.ts';

/** One worker report: its events, and how many next commands it wants (claim-ahead). */
export type Report = { events: RoutedEvent[]; claim?: Claim };
export type ReportOutcome = { results: EventResult[]; commands_generated: number; claimed: CommandRow[] };

const MAX_EVENTS_PER_TRANSACTION = 2_000;
// More than one routing transaction in flight: a batch waiting on a lock (an execution another
// server is routing) must not hold up every other worker's report on this server.
export const REPORT_BATCHES_IN_FLIGHT = 3;

/**
 * Group commit for worker reports (see GroupCommit): reports arriving while routing transactions
 * are in flight go together in the next one (one lock-and-load, one write, one commit for all),
 * and its claim-ahead serves every reporting worker.
 */
export class ReportBatcher {
  readonly #group: GroupCommit<Report, ReportOutcome>;

  constructor(deps: EngineDeps) {
    this.#group = new GroupCommit({
      maxInFlight: REPORT_BATCHES_IN_FLIGHT,
      weight: (r) => r.events.length,
      maxWeight: MAX_EVENTS_PER_TRANSACTION,
      run: (reports) => routeTogether(deps, reports),
    });
  }

  route(report: Report): Promise<ReportOutcome> {
    return this.#group.submit(report);
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
