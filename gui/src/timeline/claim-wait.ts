// What a command's grey lead-in on the Gantt holds: the time from its issue to the claim its bar
// is of. Of a first claim, a wait for a free worker or for room on its task's limit. A command
// claimed again after the worker holding it was lost (killed mid-task; the reaper handed it on)
// has no report of that lost claim in its log, so the lead-in runs to the later claim and holds
// the lost worker's time too: it was drawn as a wait for a worker.
import type { Bar } from './model.ts';

/** Of a command claimed again after its worker was lost, what its lead-in holds; null for a first claim (a wait for a worker or room). */
export function lostClaimNote(bar: Pick<Bar, 'claimAttempt'>): string | null {
  const n = bar.claimAttempt ?? 1;
  return n > 1 ? `until its claim ${n}: a worker that held it before was lost and it was claimed again, so this holds that worker's time too` : null;
}
