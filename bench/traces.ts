// `npm run bench -- --only traces`: what OpenTelemetry traces cost on the 40-step chain (the step
// overhead playbook, one in-process worker slot), traces off and on, in interleaved rounds on one
// PostgreSQL (a fresh service per round). On, spans go over OTLP/HTTP to a receiver running as its
// own process (bench/otlp-sink.ts), whose CPU is not the service's. Writes bench/results-traces.json.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { writeFile } from 'node:fs/promises';
import { cpus } from 'node:os';
import { Counters } from './counters.ts';
import { CpuMeter, loadAverage1m } from './cpu.ts';
import { openBenchDatabase } from './database.ts';
import { fmt, formatTable, noise, type Row } from './report.ts';
import { BENCH_CLAIM_WAIT_MS, closeApiAgent, sequentialPlaybook, startBenchService, type BenchService } from './service.ts';
import { StatementTimer } from './statement-timer.ts';
import { median, round } from './stats.ts';
import { STEPS, measureStepOverhead } from './step-overhead.ts';
import type { Tracing } from '../src/telemetry/start-tracing.ts';
import { Worker } from '../src/worker/worker.ts';
import { EVENT } from '../machines/event-types.ts';
import { ExecutionTraces } from '../src/telemetry/execution-traces.ts';
import { startOtlpExport } from '../src/telemetry/otlp-export.ts';
import { inCommandTrace } from '../src/telemetry/command-trace.ts';
import type { PresentedCommand } from '../src/protocol.ts';
import type { CommittedEvent, CommittedUnit, HeldExecution } from '../src/telemetry/trace-sink.ts';

const ROUNDS = 3;
const RUNS = 20;
const WARMUPS = 3;
/** On: the batch processor sends every 100 ms, so spans leave during the runs measured (not after them). */
const SCHEDULE_DELAY_MS = '100';
export const TRACES_TARGET_CPU_RATIO = 1.1;

type Mode = 'off' | 'on';
export type TracesRound = { round: number; mode: Mode; msPerStep: number; nodeCpuMsPerStep: number; postgresCpuMsPerStep: number | null; otherCores: number | null; spansPerStep: number; catchUpReadsPerStep: number };
export type TracesResult = {
  steps: number;
  runs: number;
  rounds: TracesRound[];
  /** Medians over the rounds. */
  off: { msPerStep: number; cpuMsPerStep: number; nodeCpuMsPerStep: number };
  on: { msPerStep: number; cpuMsPerStep: number; nodeCpuMsPerStep: number; spansPerStep: number };
  /** on / off, CPU of the service (Node) and PostgreSQL per step. */
  cpuRatio: number;
  /** Traces off: what a step runs of them (measureOffPath), in ns. */
  offPath: { nsPerStep: number };
  /** The span path alone (measureSpanPath): CPU per step of this process, in µs. */
  spanPath: { cpuUsPerStep: number; spansPerStep: number };
};

/** The OTLP receiver process: its URL and a count of the spans it took. */
async function startSink(): Promise<{ url: string; spans(): Promise<number>; stop(): Promise<void>; proc: ChildProcess }> {
  const proc = spawn(process.execPath, [new URL('./otlp-sink.ts', import.meta.url).pathname], { stdio: ['ignore', 'pipe', 'inherit'] });
  const [line] = (await once(proc.stdout!, 'data')) as [Buffer];
  const url = String(line).trim();
  return {
    url,
    proc,
    async spans() {
      const r = await fetch(`${url}/count`);
      return ((await r.json()) as { spans: number }).spans;
    },
    async stop() {
      proc.kill('SIGTERM');
      if (proc.exitCode === null) await once(proc, 'exit');
    },
  };
}

/** The bench service with its in-process worker given `env` (the worker reads the OTEL_* switch from its environment). */
function withWorkerEnv(s: BenchService, env: Record<string, string>): BenchService {
  return {
    ...s,
    async worker(concurrency) {
      const w = new Worker({ serverUrl: s.url, inProcess: s.svc.inProcess, token: s.svc.deps.workerToken, concurrency, env, log: s.log, claimWaitMs: BENCH_CLAIM_WAIT_MS });
      await w.start();
      return w;
    },
  };
}

export async function measureTraces(progress: (msg: string) => void, rounds = ROUNDS): Promise<{ result: TracesResult; postgres: string }> {
  const db = await openBenchDatabase();
  const sink = await startSink();
  try {
    const all: TracesRound[] = [];
    for (let round = 1; round <= rounds; round++) {
      for (const mode of ['off', 'on'] as const) {
        progress(`traces ${mode}, round ${round}/${rounds}: ${RUNS} runs of ${STEPS} steps`);
        const env: Record<string, string> = mode === 'on' ? { OTEL_EXPORTER_OTLP_ENDPOINT: sink.url, OTEL_BSP_SCHEDULE_DELAY: SCHEDULE_DELAY_MS } : {};
        const s = await startBenchService(db.url, db.dataDir, env);
        const counters = await Counters.open(db.url, s.svc.deps.db, s.url);
        try {
          if (mode === 'on' && !s.svc.deps.traces) throw new Error('traces did not start');
          if (mode === 'off' && s.svc.deps.traces) throw new Error('traces started without OTEL_EXPORTER_OTLP_ENDPOINT');
          await s.register(sequentialPlaybook('bench/steps40', STEPS));
          const spans0 = await sink.spans();
          const tracing = s.svc.deps.traces as Tracing | undefined;
          const reads0 = tracing?.traces.catchUps.reads ?? 0;
          const r = await measureStepOverhead(withWorkerEnv(s, env), counters, new CpuMeter(db.postmasterPid), new StatementTimer(), { path: 'bench/steps40', mode: 'in-process', runs: RUNS, warmups: WARMUPS, commitsPerPoll: 1 });
          await tracing?.flush();
          const spans = (await sink.spans()) - spans0;
          all.push({
            round,
            mode,
            msPerStep: r.msPerStep.median,
            nodeCpuMsPerStep: r.cpuPerStep.nodeMs,
            postgresCpuMsPerStep: r.cpuPerStep.postgresMs,
            otherCores: r.cpuPerStep.otherCores,
            // Warmup runs' spans included: per step of every run.
            spansPerStep: round3(spans / (STEPS * (RUNS + WARMUPS))),
            // Reads of the log to fill gaps in a trace's events (none expected with one server).
            catchUpReadsPerStep: round3(((tracing?.traces.catchUps.reads ?? 0) - reads0) / (STEPS * (RUNS + WARMUPS))),
          });
        } finally {
          await counters.close();
          closeApiAgent();
          await s.svc.stop();
        }
      }
    }
    const summary = (mode: Mode) => {
      const rs = all.filter((r) => r.mode === mode);
      const cpu = rs.map((r) => r.nodeCpuMsPerStep + (r.postgresCpuMsPerStep ?? 0));
      return { msPerStep: round3(median(rs.map((r) => r.msPerStep))), cpuMsPerStep: round3(median(cpu)), nodeCpuMsPerStep: round3(median(rs.map((r) => r.nodeCpuMsPerStep))), spansPerStep: round3(median(rs.map((r) => r.spansPerStep))) };
    };
    progress('the span path alone');
    const spanPath = await measureSpanPath(sink.url);
    const offPath = measureOffPath();
    const off = summary('off');
    const on = summary('on');
    return { result: { steps: STEPS, runs: RUNS, rounds: all, off: { msPerStep: off.msPerStep, cpuMsPerStep: off.cpuMsPerStep, nodeCpuMsPerStep: off.nodeCpuMsPerStep }, on, cpuRatio: round3(on.cpuMsPerStep / off.cpuMsPerStep), offPath, spanPath }, postgres: db.version };
  } finally {
    await sink.stop();
    await db.stop();
  }
}

const round3 = (n: number) => round(n, 3);

/**
 * The span path alone, without the service around it: the events of `executions` 40-step chains
 * (as their units append them, three units per step) through the executions' traces and the SDK's
 * exporter to the receiver; this process's CPU (user + system) per step, flush included.
 */
export async function measureSpanPath(sinkUrl: string, executions = 100): Promise<{ cpuUsPerStep: number; spansPerStep: number }> {
  const exporter = startOtlpExport(
    { url: `${sinkUrl}/v1/traces`, serviceName: 'svc-bench', serviceVersion: '0', resourceAttributes: {}, headers: {}, batch: { scheduledDelayMillis: 100, maxQueueSize: 2048, maxExportBatchSize: 512, exportTimeoutMillis: 30_000 } },
    { warn: () => {}, debug: () => {} },
  );
  let spans = 0;
  const traces = new ExecutionTraces({ salt: '', readEvents: async () => [], emit: (s) => ((spans += s.length), exporter.emit(s)), log: { warn: () => {} } });
  const units = (id: number) => chainUnits(id, STEPS);
  // Warm up (JIT, the exporter's connection), then measure.
  for (const u of units(1)) traces.committed(u);
  await exporter.flush();
  spans = 0;
  const t0 = process.cpuUsage();
  for (let id = 2; id < 2 + executions; id++) {
    for (const u of units(id)) traces.committed(u);
    // As in the service, spans leave while later executions run.
    if (id % 10 === 0) await new Promise((r) => setImmediate(r));
  }
  await exporter.flush();
  const used = process.cpuUsage(t0);
  await exporter.shutdown();
  const steps = executions * STEPS;
  return { cpuUsPerStep: round((used.user + used.system) / steps, 1), spansPerStep: round3(spans / steps) };
}

/**
 * What traces off add per step: a unit's `deps.traces?.committed(...)` (traces undefined) and the
 * worker's `inCommandTrace` (no traces: its config has no OTEL_* endpoint), timed over many calls; ns per step.
 */
export function measureOffPath(calls = 2_000_000): { nsPerStep: number } {
  const deps: { traces?: { committed(u: unknown): void } } = {};
  const cmd = { command_id: 1, execution_id: 1, seq: 1, attempt: 1, context: {} } as unknown as PresentedCommand;
  let sum = 0;
  const run = () => ++sum;
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < calls; i++) {
    deps.traces?.committed(i);
    inCommandTrace(undefined, cmd, run);
  }
  const ns = Number(process.hrtime.bigint() - t0) / calls;
  if (sum !== calls) throw new Error('the off path did not run the command');
  return { nsPerStep: round(ns, 1) };
}

/** The units a sequential chain of `steps` noop steps appends: the start, then per step its report and what follows. */
function chainUnits(id: number, steps: number): CommittedUnit[] {
  const at = new Date().toISOString();
  let eventId = 0;
  const ev = (event_type: string, step: string | null, context: unknown): CommittedEvent => ({ execution_id: id, event_id: ++eventId, event_type, step, context, error: null });
  const held = (nextRun: number, seq: number): HeldExecution => ({ id, status: 'running', row: { path: 'bench/steps40', root_execution_id: id, parent_execution_id: null }, snapshot: { context: { nextRun, runs: { [nextRun - 1]: {} }, pending: { [seq]: { run: nextRun - 1 } }, input: { parentSeq: null } } } });
  const out: CommittedUnit[] = [
    { held: [held(2, 1)], rows: { inbox: [], events: [ev(EVENT.executionStarted, null, { input: { path: 'bench/steps40', rootExecutionId: id, workload: {} } }), ev(EVENT.stepEnter, 's1', null), ev(EVENT.commandIssued, 's1', { seq: 1, loop_index: null })] } },
  ];
  for (let i = 1; i <= steps; i++) {
    const step = `s${i}`;
    const report = [
      ev(EVENT.commandClaimed, step, { seq: i, attempt: 1, worker_id: 'w', claimed_at: at }),
      ev(EVENT.commandStarted, step, { seq: i, loop_index: null, at }),
      ev(EVENT.callDone, step, { seq: i, task: 't', kind: 'noop', attempts: 1, duration_ms: 0, attempt_ms: 0, at }),
      ev(EVENT.commandCompleted, step, { seq: i, at }),
      ev(EVENT.stepExit, step, { status: 'ok' }),
    ];
    const next = i < steps ? [ev(EVENT.stepEnter, `s${i + 1}`, null), ev(EVENT.commandIssued, `s${i + 1}`, { seq: i + 1, loop_index: null })] : [ev(EVENT.workflowCompleted, null, null), ev(EVENT.playbookCompleted, null, null)];
    out.push({ held: [held(i + 2, i + 1)], rows: { inbox: [], events: [...report, ...next] } });
  }
  return out;
}

/** The table rows of traces off and on. */
export function tracesRows(r: TracesResult): Row[] {
  const others = r.rounds.map((x) => x.otherCores).filter((x): x is number => x !== null);
  return [
    {
      figure: `traces on: CPU per step (Node + PostgreSQL), ${r.steps}-step chain`,
      value: `${fmt(r.on.cpuMsPerStep, 3)} ms`,
      baseline: `${fmt(r.off.cpuMsPerStep, 3)} ms off`,
      ratio: `${fmt(r.cpuRatio, 3)}x`,
      target: `<= ${TRACES_TARGET_CPU_RATIO}x`,
      verdict: r.cpuRatio <= TRACES_TARGET_CPU_RATIO ? 'ok' : 'MISSED',
      noise: noise(others.length ? Math.max(...others) : null),
    },
    { figure: 'traces on: Node CPU per step', value: `${fmt(r.on.nodeCpuMsPerStep, 3)} ms`, baseline: `${fmt(r.off.nodeCpuMsPerStep, 3)} ms off`, ratio: `${fmt(r.on.nodeCpuMsPerStep / r.off.nodeCpuMsPerStep, 3)}x`, target: '', verdict: '' },
    { figure: 'traces on: step overhead', value: `${fmt(r.on.msPerStep, 3)} ms`, baseline: `${fmt(r.off.msPerStep, 3)} ms off`, ratio: `${fmt(r.on.msPerStep / r.off.msPerStep, 3)}x`, target: '', verdict: '' },
    { figure: 'traces on: spans exported per step', value: fmt(r.on.spansPerStep, 2), baseline: '', ratio: '', target: '', verdict: '' },
    { figure: 'traces off: what a step runs of them', value: `${fmt(r.offPath.nsPerStep, 1)} ns`, baseline: `${fmt(r.off.cpuMsPerStep, 3)} ms CPU off`, ratio: `${fmt(1 + r.offPath.nsPerStep / 1e6 / r.off.cpuMsPerStep, 6)}x`, target: 'nothing measurable', verdict: r.offPath.nsPerStep < 1_000 ? 'ok' : 'MISSED' },
    {
      figure: 'the span path alone: CPU per step',
      value: `${fmt(r.spanPath.cpuUsPerStep, 1)} µs`,
      baseline: `${fmt(r.off.nodeCpuMsPerStep, 3)} ms Node off`,
      ratio: `${fmt(1 + r.spanPath.cpuUsPerStep / 1000 / r.off.cpuMsPerStep, 3)}x`,
      target: `<= ${TRACES_TARGET_CPU_RATIO}x`,
      verdict: 1 + r.spanPath.cpuUsPerStep / 1000 / r.off.cpuMsPerStep <= TRACES_TARGET_CPU_RATIO ? 'ok' : 'MISSED',
    },
  ];
}

/** `--only traces`: the figures into `file`, the table on stdout. */
export async function runTracesAlone(file: string, progress: (msg: string) => void, rounds = ROUNDS): Promise<void> {
  const t0 = performance.now();
  const loadAtStart = loadAverage1m();
  const { result, postgres } = await measureTraces(progress, rounds);
  const results = {
    generated_at: new Date().toISOString(),
    machine: { cpus: cpus().length, cpu_model: cpus()[0]?.model ?? 'unknown', node: process.version, postgresql: postgres, load_average_1m: { at_start: loadAtStart, at_end: loadAverage1m() } },
    traces: result,
    duration_s: round((performance.now() - t0) / 1000, 1),
  };
  await writeFile(file, JSON.stringify(results, null, 2) + '\n');
  process.stdout.write(`\n${formatTable(tracesRows(result))}\n\n${cpus().length} CPUs, Node ${process.version}, ${postgres.split(' on ')[0]}; ${results.duration_s} s; results in ${file}\n`);
}
