// Flow control's cost (issue 31): throughput of FLOW_EXECUTIONS one-step executions spread over
// FLOW_KEYS keys, with no limit, with a playbook concurrency limit of FLOW_PER_KEY per key
// (executions queued and admitted), and with a task limit of FLOW_PER_KEY per key (commands gated
// at the claim); rounds interleaved (none, execution, task, none, ...), the median round each,
// after a round of each not counted (the first round ran at half speed: code not yet optimised by
// V8, caches cold). One in-process worker of 8 slots; the starts come from START_CONCURRENCY
// request loops.
import { fmt, type Row } from './report.ts';
import { api, type BenchService } from './service.ts';
import { round, sleep } from './stats.ts';

export const FLOW_EXECUTIONS = 1_000;
export const FLOW_KEYS = 100;
export const FLOW_PER_KEY = 8;
export const FLOW_TARGET_SHARE = 0.85;
// A round is ~0.5 s on this machine and single pairs of rounds differ by up to ±0.1 in their
// ratio (a GC, a periodic sweep): 9 rounds make the medians steadier than 5 did.
const ROUNDS = 9;
const WARM_UP_ROUNDS = 1;
const START_CONCURRENCY = 16;
const SLOTS = 8;
const POLL_MS = 20;
const ROUND_TIMEOUT_MS = 120_000;

const VARIANTS = ['none', 'execution', 'task'] as const;
type Variant = (typeof VARIANTS)[number];

export type FlowThroughputResult = {
  executions: number;
  keys: number;
  per_key: number;
  /** Steps per second, median round, and every round, per variant. */
  steps_per_s: Record<Variant, number>;
  rounds_steps_per_s: Record<Variant, number[]>;
  /** Each limited variant's median over the unlimited one's. */
  share_of_unlimited: { execution: number; task: number };
};

const playbook = (variant: Variant) => `apiVersion: svc/v1
metadata: { name: flow_${variant}, path: bench/flow_${variant} }
workload: { k: 0 }
${variant === 'execution' ? `concurrency: { limit: bench_per_key, key: "{{ workload.k }}" }\n` : ''}workflow:
  - step: start
    tool: { name: t, kind: noop${variant === 'task' ? ', limit: { name: bench_per_key, key: "{{ workload.k }}" }' : ''} }
`;

async function runRound(s: BenchService, variant: Variant): Promise<number> {
  const path = `bench/flow_${variant}`;
  const ids: number[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: START_CONCURRENCY }, async () => {
      while (next < FLOW_EXECUTIONS) {
        const k = next++ % FLOW_KEYS;
        ids.push(await s.run(path, { k }));
      }
    }),
  );
  const db = s.svc.deps.db;
  const deadline = Date.now() + ROUND_TIMEOUT_MS;
  for (;;) {
    const { rows } = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM core.execution WHERE execution_id = ANY($1::bigint[]) AND finished_at IS NULL`, [ids]);
    if (rows[0].n === 0) break;
    if (Date.now() > deadline) throw new Error(`flow ${variant}: ${rows[0].n} executions unfinished`);
    await sleep(POLL_MS);
  }
  const { rows } = await db.query<{ first_ms: number; last_ms: number; completed: number }>(
    `SELECT extract(epoch FROM min(started_at)) * 1000 AS first_ms, extract(epoch FROM max(finished_at)) * 1000 AS last_ms,
            count(*) FILTER (WHERE status = 'completed')::int AS completed
       FROM core.execution WHERE execution_id = ANY($1::bigint[])`,
    [ids],
  );
  if (rows[0].completed !== FLOW_EXECUTIONS) throw new Error(`flow ${variant}: ${rows[0].completed} of ${FLOW_EXECUTIONS} completed`);
  return rows[0].completed / ((rows[0].last_ms - rows[0].first_ms) / 1000);
}

/** Interleaved rounds of the three variants on one server and one 8-slot worker. */
export async function measureFlowThroughput(s: BenchService, progress: (msg: string) => void): Promise<FlowThroughputResult> {
  await api(s.url, 'PUT', '/api/limits/bench_per_key', { concurrency: FLOW_PER_KEY });
  for (const v of VARIANTS) await s.register(playbook(v));
  const worker = await s.worker(SLOTS);
  try {
    for (let i = 0; i < WARM_UP_ROUNDS; i++) {
      for (const v of VARIANTS) progress(`flow warm-up, ${v}: ${Math.round(await runRound(s, v))} steps/s (not counted)`);
    }
    const rounds: Record<Variant, number[]> = { none: [], execution: [], task: [] };
    for (let i = 0; i < ROUNDS; i++) {
      for (const v of VARIANTS) {
        const sps = await runRound(s, v);
        rounds[v].push(round(sps, 0));
        progress(`flow round ${i + 1}, ${v}: ${Math.round(sps)} steps/s`);
      }
    }
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
    const steps = { none: median(rounds.none), execution: median(rounds.execution), task: median(rounds.task) };
    return {
      executions: FLOW_EXECUTIONS,
      keys: FLOW_KEYS,
      per_key: FLOW_PER_KEY,
      steps_per_s: steps,
      rounds_steps_per_s: rounds,
      share_of_unlimited: { execution: round(steps.execution / steps.none, 3), task: round(steps.task / steps.none, 3) },
    };
  } finally {
    await worker.stop();
  }
}

/** The table rows of flow control's cost: each limited variant beside the unlimited one. */
export function flowRows(r: FlowThroughputResult): Row[] {
  return (['execution', 'task'] as const).map((v) => ({
    figure: `${r.executions.toLocaleString('en')} one-step executions over ${FLOW_KEYS} keys, ${FLOW_PER_KEY} per key (${v === 'execution' ? 'playbook concurrency' : 'task limit'})`,
    value: `${fmt(r.steps_per_s[v], 0)} steps/s`,
    baseline: `${fmt(r.steps_per_s.none, 0)} steps/s without limits`,
    ratio: `${fmt(r.share_of_unlimited[v], 2)}x`,
    target: `>= ${FLOW_TARGET_SHARE}x`,
    verdict: r.share_of_unlimited[v] >= FLOW_TARGET_SHARE ? 'met' : 'MISSED',
  }));
}
