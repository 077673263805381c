// A worker writes its claim of a command into the log with its first report, which for a long task
// is its end: a command it holds now, or held when the execution was cancelled, has no claim in
// the log, and its bar ran from its issue with no worker, as if none had ever run it. The step
// route reads that claim from the command's row (GET /api/executions/{id}/steps/{step}).
import type { Bar } from './model.ts';

/** A command's claim as the step route answers it (`claim_attempt` absent from older servers). */
export type ClaimRun = { seq: number | null; worker_id: string | null; claimed_at: string | null; claim_attempt?: number | null };

/** A command bar whose claim the log does not hold: open, or cancelled with no worker named. */
export const lacksClaim = (b: Bar): boolean => b.kind === 'command' && b.worker === undefined && (b.end === null || b.status === 'cancelled');

/**
 * The bars with each such command's claim as its run says: named its worker, the claim's attempt
 * and `claimedOnRow`, and drawn from the claim (the time from its issue, `queuedFrom`, a wait to
 * be claimed). A claim outside the bar's span is taken for its worker only. Other bars as they were.
 */
export function withHeldClaims(bars: readonly Bar[], runs: readonly ClaimRun[]): Bar[] {
  const bySeq = new Map<number, ClaimRun>();
  for (const r of runs) if (r.seq !== null && r.worker_id !== null && r.claimed_at !== null) bySeq.set(r.seq, r);
  return bars.map((b) => {
    const run = b.seq !== undefined && lacksClaim(b) ? bySeq.get(b.seq) : undefined;
    if (!run) return b;
    const claimed = Date.parse(run.claimed_at!);
    const held: Bar = { ...b, worker: run.worker_id!, claimAttempt: run.claim_attempt ?? b.claimAttempt, claimedOnRow: true };
    if (Number.isNaN(claimed) || claimed < b.start || (b.end !== null && claimed > b.end)) return held;
    return { ...held, queuedFrom: b.queuedFrom ?? b.start, start: claimed };
  });
}
