import { EVENT } from '../machines/event-types.ts';
import { Counters, sumHttp, type CounterDelta } from './counters.ts';
import { CpuMeter, cpuPerStep, type CpuPerStep } from './cpu.ts';
import type { BenchService, Json } from './service.ts';
import type { StatementTimer } from './statement-timer.ts';
import { median, quantile, round } from './stats.ts';
import { RequestTimer, startProcessWorker } from './workers.ts';

export const STEPS = 40;
// GET /api/executions/{id} while a run is in flight; each is one read-only commit (subtracted
// below) and costs the shared event loop CPU, so polling starts only near the expected end.
const POLL_MS = 5;
const FIRST_POLL_FRACTION = 0.85;
/** The statements of one routing transaction, as `StatementTimer` names them. */
/** Statements of a routing: the unit's one write, and its read when it held nothing in memory. */
export const ROUTE_STATEMENT = /^unit (write|read)/;

export type StepOverheadResult = {
  worker: 'in-process' | 'process';
  steps: number;
  runs: number;
  warmups: number;
  /** (playbook.completed − execution.started) / steps, from the event log's created_at. */
  msPerStep: { median: number; p90: number; samples: number[] };
  /** From sending POST /api/run/playbook to the poll that saw the execution finished, / steps. */
  wallMsPerStep: { median: number; p90: number };
  perStep: {
    writeCommits: number;
    /** (write commits − one start per run) / steps: what a sequential step costs; the bench's reaper sweeps (1 s) are in it. */
    writeCommitsBeyondStarts: number;
    commits: number;
    httpRequests: number;
    routeTransactions: number;
    /** Share of routings done from memory in one statement (the rest: lock-and-load transactions). */
    routedFromMemoryShare: number;
    msPerRouteTransaction: number;
  };
  /** CPU per step (ms) by consumer, and the event-loop utilization of this process, over the measured runs. */
  cpuPerStep: CpuPerStep;
  /** Raw counter deltas over the measured runs (bench polls excluded from `commits` but listed in http). */
  counters: CounterDelta & { benchPolls: number };
  /** Worker-side round-trip times (ms) by request, in-process worker only. */
  workerRoundTripMs?: Record<string, { count: number; median: number; p90: number }>;
  /** Every statement the server (and the bench's polls) sent during the measured runs, per step. */
  statements: ReturnType<StatementTimer['perStep']>;
  /**
   * Where one step's time goes (ms, means): the worker's report round trip, and within it the
   * routing transaction, and within that the three statements; the rest by subtraction.
   */
  breakdownMsPerStep?: {
    step: number;
    workerSide: number;
    reportRoundTrip: number;
    httpAndHandlerOutsideTransaction: number;
    routeTransaction: number;
    statements: number;
    jsInsideTransaction: number;
  };
  workerPeakRssMiB?: number | null;
};

/** Microsecond timestamps from the event log ("2026-01-01T00:00:00.123456Z") → ms since epoch with µs fraction. */
export function eventTimeMs(text: string): number {
  return Date.parse(text.slice(0, 23) + 'Z') + Number(text.slice(23, 26).padEnd(3, '0')) / 1000;
}

function spanMs(events: Json[], from: string, to: string): number {
  const a = events.find((e) => e.event_type === from);
  const b = events.find((e) => e.event_type === to);
  if (!a || !b) throw new Error(`event log lacks ${from} or ${to}: ${events.map((e) => e.event_type).join(',')}`);
  return eventTimeMs(String(b.created_at)) - eventTimeMs(String(a.created_at));
}

/**
 * A STEPS-step sequential playbook of noop tasks run `runs` times (after `warmups`) on one worker
 * slot, one execution at a time. The counters cover the measured runs only.
 */
export async function measureStepOverhead(
  s: BenchService,
  counters: Counters,
  cpu: CpuMeter,
  statementTimer: StatementTimer,
  opts: { path: string; mode: 'in-process' | 'process'; runs: number; warmups: number; commitsPerPoll: number },
): Promise<StepOverheadResult> {
  const timer = new RequestTimer();
  let stopWorker: () => Promise<number | null | undefined>;
  if (opts.mode === 'in-process') {
    const w = await s.worker(1);
    timer.attach(w);
    stopWorker = async () => {
      await w.stop();
      return undefined;
    };
  } else {
    const p = await startProcessWorker(s.url, s.svc.deps.workerToken, 1);
    cpu.extraPids.add(p.pid);
    stopWorker = async () => {
      cpu.extraPids.delete(p.pid);
      return (await p.stop()).peakRssMiB;
    };
  }
  try {
    let lastRunMs = 0;
    for (let i = 0; i < opts.warmups; i++) {
      const t0 = performance.now();
      await s.wait(await s.run(opts.path), POLL_MS, { firstPollAfterMs: lastRunMs * FIRST_POLL_FRACTION });
      lastRunMs = performance.now() - t0;
    }
    const before = await counters.snapshot();
    const cpu0 = cpu.snapshot();
    statementTimer.reset();
    statementTimer.recording = true;
    timer.recording = true;
    const ids: number[] = [];
    const wall: number[] = [];
    let polls = 0;
    for (let i = 0; i < opts.runs; i++) {
      const t0 = performance.now();
      const id = await s.run(opts.path);
      const done = await s.wait(id, POLL_MS, { firstPollAfterMs: lastRunMs * FIRST_POLL_FRACTION });
      lastRunMs = performance.now() - t0;
      wall.push(lastRunMs / STEPS);
      polls += done.polls;
      if (done.execution.status !== 'completed') throw new Error(`execution ${id} ended ${String(done.execution.status)}`);
      ids.push(id);
    }
    timer.recording = false;
    statementTimer.recording = false;
    const cpu1 = cpu.snapshot();
    const after = await counters.snapshot();
    const delta = Counters.delta(before, after);
    const samples: number[] = [];
    for (const id of ids) samples.push(spanMs(await s.events(id), EVENT.executionStarted, EVENT.playbookCompleted) / STEPS);
    const steps = STEPS * opts.runs;
    const engineHttp = sumHttp(delta.http, (k) => !k.startsWith('GET '));
    const workerRoundTripMs: StepOverheadResult['workerRoundTripMs'] = {};
    for (const [k, v] of timer.byPath) workerRoundTripMs[k] = { count: v.length, median: round(median(v), 3), p90: round(quantile(v, 0.9), 3) };
    const statements = statementTimer.perStep(steps);
    const routeStatements = statements.filter((x) => ROUTE_STATEMENT.test(x.statement)).reduce((n, x) => n + x.msPerStep, 0);
    const msRoute = delta.routeMs / steps;
    const report = timer.byPath.get('POST /api/worker/report') ?? [];
    const reportMean = report.reduce((a, b) => a + b, 0) / Math.max(1, report.length);
    const meanStep = samples.reduce((a, b) => a + b, 0) / samples.length;
    const workerPeakRssMiB = await stopWorker();
    stopWorker = async () => undefined;
    return {
      worker: opts.mode,
      steps: STEPS,
      runs: opts.runs,
      warmups: opts.warmups,
      msPerStep: { median: round(median(samples), 3), p90: round(quantile(samples, 0.9), 3), samples: samples.map((x) => round(x, 3)) },
      wallMsPerStep: { median: round(median(wall), 3), p90: round(quantile(wall, 0.9), 3) },
      perStep: {
        writeCommits: round(delta.writeCommits / steps, 3),
        writeCommitsBeyondStarts: round((delta.writeCommits - opts.runs) / steps, 3),
        commits: round((delta.commits - polls * opts.commitsPerPoll) / steps, 3),
        httpRequests: round(engineHttp / steps, 3),
        routeTransactions: round(delta.routes / steps, 3),
        routedFromMemoryShare: round(delta.routesFromMemory / Math.max(1, delta.routes), 3),
        msPerRouteTransaction: round(delta.routeMs / Math.max(1, delta.routes), 3),
      },
      cpuPerStep: cpuPerStep(CpuMeter.delta(cpu0, cpu1), steps),
      statements,
      counters: { ...delta, benchPolls: polls },
      ...(opts.mode === 'in-process'
        ? {
            workerRoundTripMs,
            breakdownMsPerStep: {
              step: round(meanStep, 3),
              workerSide: round(meanStep - reportMean, 3),
              reportRoundTrip: round(reportMean, 3),
              httpAndHandlerOutsideTransaction: round(reportMean - msRoute, 3),
              routeTransaction: round(msRoute, 3),
              statements: round(routeStatements, 3),
              jsInsideTransaction: round(msRoute - routeStatements, 3),
            },
          }
        : { workerPeakRssMiB: workerPeakRssMiB ? round(workerPeakRssMiB, 1) : null }),
    };
  } finally {
    await stopWorker();
  }
}
