import type { Logger } from '../log.ts';

/** While announcements keep failing, a line at most this often. */
const REPEAT_MS = 60_000;
/** Announcements stored this long after the last failure end the episode (one line, at info). */
const QUIET_MS = 5_000;

/** The log of NATS announcements not stored (announceFailureLog). */
export type AnnounceFailureLog = { failed(err: unknown): void; stored(): void };

/**
 * Announcements NATS did not store (NATS away, the stream deleted or at its limits with
 * discard new): each was a warning of its own, one per command issued, so a 10 s outage under
 * load or a full stream wrote thousands of lines in which the operator's own were lost. The
 * first failure is logged, then one line a minute with the count not stored since the last line,
 * and the end once, at info, when announcements are stored again with no failure for QUIET_MS
 * (stores and failures interleave while a full stream drains). Nothing is lost by not storing
 * one: the reaper announces a PENDING command again.
 */
export function announceFailureLog(log: Logger, now: () => number = () => performance.now()): AnnounceFailureLog {
  let open = false;
  let sinceLine = 0;
  let inEpisode = 0;
  let lineAt = 0;
  let lastFailureAt = 0;
  return {
    failed(err) {
      const at = now();
      sinceLine++;
      inEpisode++;
      lastFailureAt = at;
      if (open && at - lineAt < REPEAT_MS) return;
      log.warn({ err: err instanceof Error ? err.message : String(err), not_stored: sinceLine }, 'bus: NATS announcement not stored; the reaper announces the command again (further failures are counted, a line a minute)');
      open = true;
      lineAt = at;
      sinceLine = 0;
    },
    stored() {
      if (!open || now() - lastFailureAt < QUIET_MS) return;
      log.info({ not_stored: inEpisode }, 'bus: NATS announcements stored again');
      open = false;
      inEpisode = 0;
      sinceLine = 0;
    },
  };
}
