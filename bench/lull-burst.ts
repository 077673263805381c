// `npm run bench -- --only lull`: a burst of starts on a server that sat idle, beside the same
// burst on a warm one. A schedule fired once a minute, a webhook after a quiet spell: the first
// work after a lull meets whatever the idle time closed (pool connections, with the plans of
// their prepared statements). One-step executions of a noop task on an in-process worker of
// LULL_SLOTS slots; each round starts LULL_BURST at once after LULL_MS of nothing, then again at once.
import { eventTimeMs } from './step-overhead.ts';
import { fmt, type Row } from './report.ts';
import { sequentialPlaybook, type BenchService } from './service.ts';
import { median, round } from './stats.ts';

export const LULL_MS = 35_000;
export const LULL_BURST = 8;
export const LULL_SLOTS = 4;
export const LULL_ROUNDS = 3;
/** One-at-a-time runs before the first round: the code warm, a connection or two open. */
const WARMUP_RUNS = 20;
const POLL_MS = 10;
const PATH = 'bench/lull';

export type LullBurstResult = {
  lullMs: number;
  burst: number;
  slots: number;
  /** Per round: each execution's start to completion (ms, event-log clock), after the lull and warm. */
  rounds: { afterLull: number[]; warm: number[] }[];
  /** The burst's last completion (ms from its own start), median of the rounds. */
  lastAfterLullMs: number;
  lastWarmMs: number;
};

/** Start to completion of each of `n` executions started at once (ms, from their events' times). */
async function burst(s: BenchService, path: string, n: number): Promise<number[]> {
  return Promise.all(
    Array.from({ length: n }, async () => {
      const id = await s.run(path);
      await s.wait(id, POLL_MS);
      const events = await s.events(id);
      return round(eventTimeMs(String(events.at(-1)?.created_at)) - eventTimeMs(String(events[0]?.created_at)), 2);
    }),
  );
}

/** The rounds, of a one-step playbook it registers; `progress` tells of each lull. */
export async function measureLullBurst(s: BenchService, progress: (msg: string) => void): Promise<LullBurstResult> {
  await s.register(sequentialPlaybook(PATH, 1));
  const w = await s.worker(LULL_SLOTS);
  try {
    for (let i = 0; i < WARMUP_RUNS; i++) await burst(s, PATH, 1);
    const rounds: LullBurstResult['rounds'] = [];
    for (let r = 0; r < LULL_ROUNDS; r++) {
      progress(`lull ${r + 1}/${LULL_ROUNDS}: ${LULL_MS / 1000} s idle, then ${LULL_BURST} starts at once, then ${LULL_BURST} more`);
      await new Promise((ok) => setTimeout(ok, LULL_MS));
      const afterLull = await burst(s, PATH, LULL_BURST);
      rounds.push({ afterLull, warm: await burst(s, PATH, LULL_BURST) });
    }
    return {
      lullMs: LULL_MS,
      burst: LULL_BURST,
      slots: LULL_SLOTS,
      rounds,
      lastAfterLullMs: median(rounds.map((x) => Math.max(...x.afterLull))),
      lastWarmMs: median(rounds.map((x) => Math.max(...x.warm))),
    };
  } finally {
    await w.stop();
  }
}

/** The table row: the burst after the lull beside the warm one. */
export function lullRows(r: LullBurstResult): Row[] {
  return [
    {
      figure: `${r.burst} one-step starts at once after ${r.lullMs / 1000} s idle (${r.slots} slots): last completed (median of ${r.rounds.length})`,
      value: `${fmt(r.lastAfterLullMs, 1)} ms`,
      baseline: `${fmt(r.lastWarmMs, 1)} ms warm`,
      ratio: `${fmt(r.lastAfterLullMs / r.lastWarmMs, 2)}x`,
      target: '',
      verdict: '',
    },
  ];
}
