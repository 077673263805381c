import * as v from 'valibot';
import { ReportBatcher } from '../../actors/report-batcher.ts';
import type { AppDeps } from '../app-deps.ts';
import { claimedByRequest, claimPolicyOf, type ClaimPolicy, type CommandRow } from '../db/command.repo.ts';
import type { ReportAnswer, ReportRequest } from '../protocol.ts';
import { eventInputSchema } from './events.ts';
import { presentCommand } from './present.ts';
import { databaseNow } from '../waits/wait-clock.ts';
import { stampReportedTimes } from './reported-times.ts';
import { integerIn } from './validation.ts';
import { workerName } from './worker-name.ts';

export { workerName } from './worker-name.ts';
// A worker names each claiming request; sent again after a lost answer (`retry`), the same id
// gets back the commands the first attempt claimed (migrations/0007_claim_token.sql).
export const requestId = v.pipe(v.string(), v.minLength(1), v.maxLength(100));
export const reportBody = v.object({
  worker_id: workerName,
  report_id: v.optional(requestId),
  retry: v.optional(v.boolean(), false),
  events: v.pipe(v.array(eventInputSchema), v.maxLength(10_000)),
  claim: v.optional(integerIn(0, 256), 0),
}) satisfies v.GenericSchema<unknown, ReportRequest>;

declare module 'fastify' {
  interface FastifyInstance {
    /** The worker protocol's shared side, decorated at the root (src/app.ts): the routes' and in-process pools'. */
    workerDesk: WorkerDesk;
  }
}

/** A report as the body's schema leaves it (defaults filled in). */
export type ValidReport = v.InferOutput<typeof reportBody>;

/**
 * The server's side of the worker protocol that its routes share, and that pools in the server's
 * own process call without HTTP (src/in-process-server.ts): the claim policy, the requests sent
 * again, and the report with its claim.
 */
export class WorkerDesk {
  /** Which claimed commands a claim may take over (SVC_COMMAND_REAPER_WORKER_STALE_SECONDS, ...). */
  readonly policy: ClaimPolicy;
  readonly #deps: AppDeps;
  readonly #reports: ReportBatcher;

  constructor(deps: AppDeps) {
    this.#deps = deps;
    this.policy = claimPolicyOf(deps.config);
    this.#reports = new ReportBatcher(deps, this.reclaim);
  }

  /** Claims look beyond PENDING commands only while the reaper has announced stranded ones. */
  readonly reclaim = (): ClaimPolicy | null => (this.#deps.bus.strandedHeard() ? this.policy : null);

  /**
   * A request sent again may have been carried out, its answer lost: what it claimed is still
   * claimed by this worker under its id, unstarted; it gets those first.
   */
  async redelivered(workerId: string, token: string | undefined, retry: boolean): Promise<CommandRow[]> {
    if (!retry || !token) return [];
    const rows = await claimedByRequest(this.#deps.db, workerId, token);
    for (const c of rows) this.#deps.snapshots.commands.set(c);
    return rows;
  }

  /** A worker's events, routed as one unit, and the commands it claims with them (claim-ahead). */
  async report(b: ValidReport): Promise<ReportAnswer> {
    const again = await this.redelivered(b.worker_id, b.report_id, b.retry);
    const max = Math.max(0, b.claim - again.length);
    // Each event carries the report it came in: the same report sent again is then stored once (actors/route-report.ts).
    const id = b.report_id;
    const stamped = stampReportedTimes(b.events, databaseNow(this.#deps));
    const events = id === undefined ? stamped : stamped.map((e) => ({ ...e, report_id: id }));
    const out = await this.#reports.route({ events, claim: max ? { workerId: b.worker_id, max, token: id } : undefined, id: id === undefined ? undefined : { workerId: b.worker_id, reportId: id } });
    return { status: 'ok', results: out.results, commands_generated: out.commands_generated, commands: [...again, ...out.claimed].map(presentCommand) };
  }
}
