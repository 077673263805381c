import { randomUUID } from 'node:crypto';
import type { ClaimPolicy, CommandRow } from '../src/db/command.repo.ts';
import type { Claimer } from '../src/db/unit-write.ts';
import type { EngineDeps } from './engine-deps.ts';
import { GroupCommit } from './group-commit.ts';
import { routeEvents } from './route-events.ts';
import type { EventResult, RoutedEvent } from '../src/protocol.ts';

/**
 * One worker report: its events, and how many next commands it wants (claim-ahead), by its
 * request's token when it names one. `id`: the worker's and its request's, when it names one
 * (a report sent again has the same).
 */
export type Report = { events: RoutedEvent[]; claim?: Omit<Claimer, 'token'> & { token?: string }; id?: { workerId: string; reportId: string } };
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

  /** `claimPolicy`: asked at each routing; with a policy, claim-ahead also takes stranded commands it lets go. */
  constructor(deps: EngineDeps, claimPolicy: () => ClaimPolicy | null = () => null) {
    this.#group = new GroupCommit({
      maxInFlight: REPORT_BATCHES_IN_FLIGHT,
      weight: (r) => r.events.length,
      maxWeight: MAX_EVENTS_PER_TRANSACTION,
      run: (reports) => routeTogether(deps, reports, claimPolicy()),
    });
  }

  route(report: Report): Promise<ReportOutcome> {
    return this.#group.submit(report);
  }
}

/**
 * Routes several reports in one transaction and hands each its results and the commands it
 * claimed. A report sent again while its first sending waits in the same batch is routed once,
 * and both get that answer, as a sending again after a committed one gets the commands it claimed.
 */
async function routeTogether(deps: EngineDeps, reports: Report[], claimPolicy: ClaimPolicy | null): Promise<ReportOutcome[]> {
  const firstSending = new Map<string, number>();
  const sameAs = reports.map((r, i) => {
    if (!r.id) return i;
    const key = `${r.id.workerId}\n${r.id.reportId}`;
    const first = firstSending.get(key);
    if (first === undefined) firstSending.set(key, i);
    return first ?? i;
  });
  const routed = reports.filter((_, i) => sameAs[i] === i);
  // Every claim carries a token (the worker's, or one made here), by which its commands come back.
  const claims = routed.map((r) => (r.claim && r.claim.max > 0 ? { ...r.claim, token: r.claim.token ?? randomUUID() } : undefined));
  const out = await routeEvents(deps, routed.flatMap((r) => r.events), { claims: claims.filter((c) => c !== undefined), claimPolicy });
  const answers: ReportOutcome[] = [];
  let at = 0;
  let k = 0; // the place among those routed
  for (const [i, r] of reports.entries()) {
    // A sending again takes its first sending's answer (an earlier place: already made).
    if (sameAs[i] !== i) {
      answers.push(answers[sameAs[i]]);
      continue;
    }
    const results = out.results.slice(at, at + r.events.length);
    at += r.events.length;
    const token = claims[k++]?.token;
    const claimed = token === undefined ? [] : out.claimed.filter((c) => c.claim_token === token);
    // commands_generated is the transaction's: it is shared by the reports routed in it.
    answers.push({ results, commands_generated: out.commands_generated, claimed });
  }
  return answers;
}
