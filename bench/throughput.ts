import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { Worker } from '../src/worker/worker.ts';
import { Counters, sumHttp, type CounterDelta } from './counters.ts';
import { CpuMeter, cpuPerStep, type CpuPerStep } from './cpu.ts';
import { api, type BenchService } from './service.ts';
import { round, sleep } from './stats.ts';
import { startProcessWorker, type ProcessWorker } from './workers.ts';

export const EXECUTIONS = 1_000;
export const START_CONCURRENCY = 16;
export const ROUNDS = 3;
/**
 * Rounds run first and not counted: a fresh pool starts without prefetch (its running average of
 * command durations is unknown) and V8 has not optimised the code yet, so a first round ran
 * 25-40 % below the next ones and was often the median (the flow bench does the same).
 */
export const WARMUP_ROUNDS = 1;
const POLL_MS = 10;

export type ThroughputVariant = { label: string; slots: number[]; process?: boolean };

export type ThroughputResult = {
  variant: string;
  /** Per round. */
  executions: number;
  rounds: number;
  workerSlots: number[];
  workerProcess: boolean;
  /** Completed steps per second from the first execution's start to the last one's completion (database timestamps): median round. */
  stepsPerSecond: number;
  roundsStepsPerSecond: number[];
  /** Same, by the bench's wall clock: first POST sent to the poll that saw nothing running. */
  wallStepsPerSecond: number;
  spanMs: number;
  /** Time to get all POST /api/run/playbook answered (START_CONCURRENCY in flight), median round. */
  startPhaseMs: number;
  /** Completed executions over all rounds. */
  completed: number;
  perStep: { writeCommits: number; commits: number; httpRequests: number; routeTransactions: number; routedFromMemoryShare: number; msPerRouteTransaction: number };
  cpuPerStep: CpuPerStep;
  counters: CounterDelta & { benchPolls: number };
};

type Round = { stepsPerSecond: number; wallStepsPerSecond: number; spanMs: number; startPhaseMs: number; completed: number; polls: number };

const LOAD_CLIENT_READY_TIMEOUT_MS = 15_000;
const ROUND_TIMEOUT_MS = 120_000;

/**
 * The clients that start executions, in a process of their own (bench/load-client.ts), as real
 * clients are: the server's event loop does not also run their HTTP. Its CPU is reported apart.
 */
class LoadClient {
  readonly pid: number;
  readonly #child: ChildProcess;
  readonly #lines: AsyncIterator<string>;

  private constructor(child: ChildProcess) {
    this.#child = child;
    this.pid = child.pid!;
    this.#lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
  }

  static async start(serverUrl: string): Promise<LoadClient> {
    const child = spawn(process.execPath, [join(import.meta.dirname, 'load-client.ts'), serverUrl], { stdio: ['pipe', 'pipe', 'inherit'] });
    const client = new LoadClient(child);
    const ready = await Promise.race([client.#lines.next(), new Promise<null>((ok) => setTimeout(() => ok(null), LOAD_CLIENT_READY_TIMEOUT_MS))]);
    if (!ready || ready.done || ready.value !== 'ready') {
      child.kill();
      throw new Error('load client did not start');
    }
    return client;
  }

  /** EXECUTIONS starts of `path` from START_CONCURRENCY concurrent request loops; the ids, in no order. */
  async round(path: string): Promise<{ ids: number[]; startPhaseMs: number }> {
    this.#child.stdin!.write(JSON.stringify({ path, executions: EXECUTIONS, concurrency: START_CONCURRENCY }) + '\n');
    const timer = setTimeout(() => this.#child.kill(), ROUND_TIMEOUT_MS);
    try {
      const line = await this.#lines.next();
      if (line.done) throw new Error('load client exited before answering');
      const parsed: unknown = JSON.parse(line.value);
      if (!parsed || typeof parsed !== 'object' || !('ids' in parsed) || !Array.isArray(parsed.ids) || !('startPhaseMs' in parsed) || typeof parsed.startPhaseMs !== 'number') {
        throw new Error(`load client: unexpected answer ${line.value.slice(0, 200)}`);
      }
      return { ids: parsed.ids.filter((id): id is number => typeof id === 'number'), startPhaseMs: parsed.startPhaseMs };
    } finally {
      clearTimeout(timer);
    }
  }

  async stop(): Promise<void> {
    const exited = new Promise<void>((ok) => this.#child.once('exit', () => ok()));
    this.#child.stdin!.end();
    await exited;
  }
}

/** One round: EXECUTIONS starts from the load client, then wait until none is running. */
async function runRound(s: BenchService, client: LoadClient, path: string): Promise<Round> {
  const t0 = performance.now();
  const { ids, startPhaseMs } = await client.round(path);
  let polls = 0;
  for (;;) {
    polls++;
    const r = await api<{ count: number }>(s.url, 'GET', '/api/executions?status=running&limit=1');
    if (r.count === 0) break;
    await sleep(POLL_MS);
  }
  const wallMs = performance.now() - t0;
  const { rows } = await s.svc.deps.db.query<{ first_ms: number; last_ms: number; completed: number }>(
    `SELECT extract(epoch FROM min(started_at)) * 1000 AS first_ms, extract(epoch FROM max(finished_at)) * 1000 AS last_ms,
            count(*) FILTER (WHERE status = 'completed')::int AS completed
       FROM core.execution WHERE execution_id = ANY($1::bigint[])`,
    [ids],
  );
  const spanMs = rows[0].last_ms - rows[0].first_ms;
  return {
    stepsPerSecond: rows[0].completed / (spanMs / 1000),
    wallStepsPerSecond: rows[0].completed / (wallMs / 1000),
    spanMs,
    startPhaseMs,
    completed: rows[0].completed,
    polls: polls + 1, // and the completion query above, on the server's pool
  };
}

/**
 * ROUNDS rounds of EXECUTIONS one-step executions (after WARMUP_ROUNDS not counted), started as
 * fast as START_CONCURRENCY clients can and run by the variant's workers; the median round is the
 * figure, the counters cover all the counted ones.
 */
export async function measureThroughput(
  s: BenchService,
  counters: Counters,
  cpu: CpuMeter,
  opts: { path: string; variant: ThroughputVariant; commitsPerPoll: number },
): Promise<ThroughputResult> {
  const inProcess: Worker[] = [];
  const processes: ProcessWorker[] = [];
  const client = await LoadClient.start(s.url);
  cpu.clientPids.add(client.pid);
  try {
    for (const slots of opts.variant.slots) {
      if (opts.variant.process) {
        const p = await startProcessWorker(s.url, s.svc.deps.workerToken, slots);
        processes.push(p);
        cpu.extraPids.add(p.pid);
      } else inProcess.push(await s.worker(slots));
    }
    for (let i = 0; i < WARMUP_ROUNDS; i++) await runRound(s, client, opts.path);
    const before = await counters.snapshot();
    const cpu0 = cpu.snapshot();
    const rounds: Round[] = [];
    for (let i = 0; i < ROUNDS; i++) rounds.push(await runRound(s, client, opts.path));
    const cpu1 = cpu.snapshot();
    const after = await counters.snapshot();
    const delta = Counters.delta(before, after);
    const mid = [...rounds].sort((a, b) => a.stepsPerSecond - b.stepsPerSecond)[Math.floor(ROUNDS / 2)];
    const steps = rounds.reduce((n, r) => n + r.completed, 0);
    const polls = rounds.reduce((n, r) => n + r.polls, 0);
    return {
      variant: opts.variant.label,
      executions: EXECUTIONS,
      rounds: ROUNDS,
      workerSlots: opts.variant.slots,
      workerProcess: Boolean(opts.variant.process),
      stepsPerSecond: round(mid.stepsPerSecond, 0),
      roundsStepsPerSecond: rounds.map((r) => round(r.stepsPerSecond, 0)),
      wallStepsPerSecond: round(mid.wallStepsPerSecond, 0),
      spanMs: round(mid.spanMs, 1),
      startPhaseMs: round(mid.startPhaseMs, 1),
      completed: steps,
      perStep: {
        writeCommits: round(delta.writeCommits / steps, 3),
        commits: round((delta.commits - polls * opts.commitsPerPoll) / steps, 3),
        httpRequests: round(sumHttp(delta.http, (k) => !k.startsWith('GET ')) / steps, 3),
        routeTransactions: round(delta.routes / steps, 3),
        routedFromMemoryShare: round(delta.routesFromMemory / Math.max(1, delta.routes), 3),
        msPerRouteTransaction: round(delta.routeMs / Math.max(1, delta.routes), 3),
      },
      cpuPerStep: cpuPerStep(CpuMeter.delta(cpu0, cpu1), steps),
      counters: { ...delta, benchPolls: polls },
    };
  } finally {
    cpu.clientPids.delete(client.pid);
    await client.stop();
    for (const w of inProcess) await w.stop();
    for (const p of processes) {
      cpu.extraPids.delete(p.pid);
      await p.stop();
    }
  }
}
