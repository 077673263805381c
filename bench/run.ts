// `npm run bench`: every figure beside its baseline, measured in one run on one PostgreSQL.
// Writes bench/results.json and prints a table. See docs/benchmarks.md.
import { writeFile } from 'node:fs/promises';
import { cpus, arch, platform, release, totalmem } from 'node:os';
import { join } from 'node:path';
import { commitLatency, commitThroughput } from './baselines.ts';
import { BATCH_TARGET_P99_MS, batchRows, measureBatchIntake, type BatchRunResult } from './batch-intake.ts';
import { Counters } from './counters.ts';
import { GATEWAY_TARGET_P50_MS, measureGatewayLatency, type GatewayLatencyResult } from './gateway-latency.ts';
import { CpuMeter, loadAverage1m } from './cpu.ts';
import { openBenchDatabase, type BenchDatabase } from './database.ts';
import { hydrationRows, measureHydration } from './hydration.ts';
import { measureShortLoop } from './loop-cost.ts';
import { RSS_SAMPLE_INTERVAL_MS, RssSampler } from './memory.ts';
import { fmt, formatTable, noise, type Row } from './report.ts';
import { api, closeApiAgent, sequentialLoopPlaybook, sequentialPlaybook, startBenchService, type BenchService } from './service.ts';
import { StatementTimer } from './statement-timer.ts';
import { round } from './stats.ts';
import { benchOptions, TRACES_DEFAULT_ROUNDS } from './run-options.ts';
import { ROUTE_STATEMENT, STEPS, measureStepOverhead, type StepOverheadResult } from './step-overhead.ts';
import { EXECUTIONS, measureThroughput, type ThroughputResult, type ThroughputVariant } from './throughput.ts';
import { measureWebhookAcceptance, webhookRows } from './webhook-acceptance.ts';
import { measureTriggerLateness, TRIGGER_TARGET_P99_MS } from './trigger-lateness.ts';
import { measureTimerBurst, TIMER_TARGET_MS, type TimerBurstResult } from './timer-burst.ts';
import { runTracesAlone } from './traces.ts';
import { flowRows, measureFlowThroughput } from './flow-throughput.ts';
import { runServersAlone, type ServersResult } from './multi-server.ts';
import { lullRows, measureLullBurst } from './lull-burst.ts';
import { keepShortLivedObjectsYoung } from '../src/gc-settings.ts';

const BASELINE_LATENCY_COMMITS = 2_000;
const BASELINE_THROUGHPUT_CONNECTIONS = 8;
const BASELINE_THROUGHPUT_MS = 3_000;
const STEP_RUNS = 20;
// A run is 40 steps (~0.1 s): after two, in-process runs still got faster run after run for ten
// more (3.3 -> 2.2 ms per step) while V8 optimised the step path, so the median was half warm-up.
const STEP_WARMUPS = 10;
const CALIBRATION_GETS = 20;
const TARGET_MS_PER_STEP = 5;
const TARGET_STEPS_PER_SECOND = 1_000;
const THROUGHPUT_VARIANTS: ThroughputVariant[] = [
  { label: '1 worker x 8 slots', slots: [8] },
  { label: '2 workers x 4 slots', slots: [4, 4] },
  { label: '1 worker process x 8 slots', slots: [8], process: true },
];
const RESULTS_FILE = join(import.meta.dirname, 'results.json');
const BATCH_RESULTS_FILE = join(import.meta.dirname, 'results-batch.json');
const GATEWAY_RESULTS_FILE = join(import.meta.dirname, 'results-gateway.json');
const WEBHOOK_RESULTS_FILE = join(import.meta.dirname, 'results-webhook.json');
const TIMERS_RESULTS_FILE = join(import.meta.dirname, 'results-timers.json');
const FLOW_RESULTS_FILE = join(import.meta.dirname, 'results-flow.json');
const TRACES_RESULTS_FILE = join(import.meta.dirname, 'results-traces.json');
const SERVERS_RESULTS_FILE = join(import.meta.dirname, 'results-servers.json');
const LULL_RESULTS_FILE = join(import.meta.dirname, 'results-lull.json');
const HYDRATION_RESULTS_FILE = join(import.meta.dirname, 'results-hydration.json');
const { only, rounds, executions, batchSeconds, batchFirst, batchSearch } = benchOptions(process.argv.slice(2));
// Batch processors of the bench's server (SVC_BATCH_ACCEPT_WORKERS): one, the default. Two made
// more, smaller handling calls for more CPU (79-81 % busy against 70-75 % at 300/s) and a longer
// ack tail (p99 24-25 against 21-22 ms, three runs each); one keeps up (drained in 0.1-1.1 s).
const BATCH_ENV = { SVC_BATCH_ACCEPT_WORKERS: '1' };

// The in-process server runs with the collector settings `svc` sets at its start.
keepShortLivedObjectsYoung();
const T0 = performance.now();
const progress = (msg: string) => process.stderr.write(`[bench ${((performance.now() - T0) / 1000).toFixed(1)}s] ${msg}\n`);

/** The table rows of the gateway's added latency. */
function gatewayRows(r: GatewayLatencyResult): Row[] {
  return r.pairs.flatMap((p) => [
    {
      figure: `gateway added latency, ${p.via} (p50)`,
      value: `${fmt(p.added.p50, 3)} ms`,
      baseline: `${fmt(p.direct.p50, 3)} ms direct`,
      ratio: `${fmt(p.gateway.p50 / p.direct.p50, 2)}x`,
      target: `<= ${GATEWAY_TARGET_P50_MS} ms`,
      verdict: p.added.p50 <= GATEWAY_TARGET_P50_MS ? 'ok' : 'MISSED',
    },
    { figure: `gateway added latency, ${p.via} (p99)`, value: `${fmt(p.added.p99, 3)} ms`, baseline: `${fmt(p.direct.p99, 3)} ms direct`, ratio: `${fmt(p.gateway.p99 / p.direct.p99, 2)}x`, target: '', verdict: '' },
  ]);
}

/** One part of the bench run alone (`--only`): its figures into `file`, its table on stdout. */
type Alone<R> = { file: string; key: string; env?: Record<string, string>; settings?: Record<string, string>; measure: (s: BenchService, db: BenchDatabase) => Promise<R>; rows: (r: R) => Row[] };

async function runAlone<R>(a: Alone<R>): Promise<void> {
  const loadAtStart = loadAverage1m();
  progress('starting PostgreSQL');
  const db = await openBenchDatabase();
  try {
    const s = await startBenchService(db.url, db.dataDir, a.env);
    try {
      const figures = await a.measure(s, db);
      const results = {
        generated_at: new Date().toISOString(),
        machine: { cpus: cpus().length, cpu_model: cpus()[0]?.model ?? 'unknown', node: process.version, postgresql: db.version, postgresql_source: db.source, load_average_1m: { at_start: loadAtStart, at_end: loadAverage1m() } },
        ...(a.settings ? { settings: a.settings } : {}),
        [a.key]: figures,
        duration_s: round((performance.now() - T0) / 1000, 1),
      };
      await writeFile(a.file, JSON.stringify(results, null, 2) + '\n');
      process.stdout.write(`\n${formatTable(a.rows(figures))}\n\n${cpus().length} CPUs, Node ${process.version}, ${db.version.split(' on ')[0]}; ${results.duration_s} s; results in ${a.file}\n`);
    } finally {
      closeApiAgent();
      await s.svc.stop();
    }
  } finally {
    await db.stop();
  }
}

const ALONE = {
  batch: (): Promise<void> =>
    runAlone({ file: BATCH_RESULTS_FILE, key: 'batch_intake', env: BATCH_ENV, settings: BATCH_ENV, measure: (s, db) => measureBatchIntake(s, db.url, batchFirst, progress, batchSearch), rows: batchRows }),
  gateway: (): Promise<void> => runAlone({ file: GATEWAY_RESULTS_FILE, key: 'gateway_latency', measure: (s, db) => measureGatewayLatency(s.url, db.url, progress), rows: gatewayRows }),
  webhook: (): Promise<void> =>
    runAlone({ file: WEBHOOK_RESULTS_FILE, key: 'webhook_acceptance', measure: (s, db) => measureWebhookAcceptance(s, progress, { cpu: new CpuMeter(db.postmasterPid) }), rows: webhookRows }),
  timers: (): Promise<void> => runAlone({ file: TIMERS_RESULTS_FILE, key: 'timer_burst', measure: (s, db) => measureTimerBurst(s, db.url, progress), rows: timerRows }),
  traces: (): Promise<void> => runTracesAlone(TRACES_RESULTS_FILE, progress, rounds ?? TRACES_DEFAULT_ROUNDS),
  flow: (): Promise<void> => runAlone({ file: FLOW_RESULTS_FILE, key: 'flow_throughput', measure: (s) => measureFlowThroughput(s, progress), rows: flowRows }),
  lull: (): Promise<void> => runAlone({ file: LULL_RESULTS_FILE, key: 'lull_burst', measure: (s) => measureLullBurst(s, progress), rows: lullRows }),
  hydration: (): Promise<void> =>
    runAlone({
      file: HYDRATION_RESULTS_FILE,
      key: 'hydration',
      measure: async (s) => {
        await s.register(sequentialLoopPlaybook('bench/loop-held', { hold: true }));
        progress('hydration: building a ~10,000-event execution (a loop of 1,665 items)');
        return measureHydration(s, { path: 'bench/loop-held' });
      },
      rows: hydrationRows,
    }),
  servers: (): Promise<void> =>
    runServersAlone(
      SERVERS_RESULTS_FILE,
      progress,
      {
        rounds,
        executions,
        batchSeconds,
      },
      serversRows,
    ),
} as const;

/** The table rows of many servers: per bus and number of servers, steps/s and CPU per execution beside one server; batch accept p99 per bus. */
function serversRows(r: ServersResult): Row[] {
  const rows: Row[] = [];
  for (const c of r.configurations) {
    const one = r.configurations.find((o) => o.bus === c.bus && o.servers === 1);
    const label = `${c.servers} server${c.servers > 1 ? 's' : ''}, ${c.bus} bus`;
    const others = r.rounds.filter((x) => x.bus === c.bus && x.servers === c.servers).map((x) => x.otherCores ?? 0);
    rows.push({
      figure: `${label}: ${r.executions.toLocaleString('en')} one-step executions (median of ${c.rounds})`,
      value: `${fmt(c.stepsPerSecond, 0)} steps/s`,
      baseline: one ? `${fmt(one.stepsPerSecond, 0)} with 1 server` : '',
      ratio: `${fmt(c.stepsPerSecondVsOneServer, 2)}x`,
      target: '',
      verdict: '',
      noise: noise(Math.max(...others)),
    });
    const p = c.cpuMsPerExecution;
    rows.push({
      figure: `  CPU per execution: servers + workers + PostgreSQL${c.bus === 'nats' ? ' + nats-server' : ''}`,
      value: `${fmt(p.total)} ms`,
      baseline: `${fmt(p.servers)} + ${fmt(p.workers)} + ${fmt(p.postgres)}${c.bus === 'nats' ? ` + ${fmt(p.nats)}` : ''}`,
      ratio: `${fmt(c.cpuVsOneServer, 2)}x`,
      target: '',
      verdict: '',
    });
    rows.push({
      figure: '  per execution: routings (from memory) / write commits',
      value: `${fmt(c.perExecution.routings, 3)} (${fmt(c.perExecution.routedFromMemoryShare * 100, 0)}%) / ${fmt(c.perExecution.writeCommits, 3)}`,
      baseline: '',
      ratio: '',
      target: '',
      verdict: '',
    });
  }
  const pgRuns = r.batch.runs.filter((b) => b.bus === 'postgres');
  for (const b of pgRuns) {
    rows.push({
      figure: `batch accept ${r.batch.rate}/s, ${r.batch.seconds} s, PostgreSQL bus, run ${b.run}: ack p99`,
      value: `${fmt(b.result.ackMs.p99)} ms`,
      baseline: `p50 ${fmt(b.result.ackMs.p50)} ms`,
      ratio: '',
      target: `<= ${BATCH_TARGET_P99_MS} ms`,
      verdict: b.result.meetsTarget ? 'ok' : 'MISSED',
      noise: noise(b.otherCores),
    });
  }
  for (const b of r.batch.runs.filter((x) => x.bus === 'nats')) {
    const pgRun = pgRuns.find((x) => x.run === b.run);
    rows.push({
      figure: `batch accept ${r.batch.rate}/s, ${r.batch.seconds} s, NATS bus, run ${b.run}: ack p99`,
      value: `${fmt(b.result.ackMs.p99)} ms`,
      baseline: pgRun ? `${fmt(pgRun.result.ackMs.p99)} ms PostgreSQL bus` : '',
      ratio: pgRun ? `${fmt(b.result.ackMs.p99 / pgRun.result.ackMs.p99, 2)}x` : '',
      target: `<= ${BATCH_TARGET_P99_MS} ms`,
      verdict: b.result.meetsTarget ? 'ok' : 'MISSED',
      noise: noise(b.otherCores),
    });
  }
  return rows;
}

/** The table row of timers due together. */
function timerRows(r: TimerBurstResult): Row[] {
  return [
    {
      figure: `${r.executions.toLocaleString('en')} timers due in one second: due to all fired`,
      value: `${fmt(r.all_fired_ms, 0)} ms`,
      baseline: `p50 ${fmt(r.p50_fired_ms, 0)} ms, ${r.fired} fired; the timekeeper looks every ${r.look_interval_ms} ms`,
      ratio: '',
      target: `<= ${TIMER_TARGET_MS} ms`,
      verdict: r.fired === r.executions && r.all_fired_ms <= TIMER_TARGET_MS ? 'met' : 'MISSED',
    },
  ];
}

async function main(): Promise<void> {
  const loadAtStart = loadAverage1m();
  const rss = new RssSampler();
  rss.start();
  progress('starting PostgreSQL');
  const db = await openBenchDatabase();
  try {
    progress(`PostgreSQL: ${db.version.split(' on ')[0]} (${db.source}); baselines`);
    rss.phase('baselines');
    const latency = await commitLatency(db.url, BASELINE_LATENCY_COMMITS);
    const commitRate = await commitThroughput(db.url, BASELINE_THROUGHPUT_CONNECTIONS, BASELINE_THROUGHPUT_MS);

    rss.phase('service');
    const s = await startBenchService(db.url, db.dataDir, BATCH_ENV);
    const counters = await Counters.open(db.url, s.svc.deps.db, s.url);
    const cpu = new CpuMeter(db.postmasterPid);
    const statementTimer = new StatementTimer();
    statementTimer.install();
    try {
      await s.register(sequentialPlaybook('bench/steps40', STEPS));
      await s.register(sequentialPlaybook('bench/one', 1));
      await s.register(sequentialLoopPlaybook('bench/loop'));
      await s.register(sequentialLoopPlaybook('bench/loop-held', { hold: true }));

      // Calibration: an idle interval must count zero commits, and each bench poll costs this many.
      const idle0 = await counters.snapshot();
      const idle1 = await counters.snapshot();
      const idleCommits = Counters.delta(idle0, idle1).commits;
      for (let i = 0; i < CALIBRATION_GETS; i++) {
        await api(s.url, 'GET', '/api/executions?status=running&limit=1');
        await api(s.url, 'GET', '/api/executions/1').catch(() => {}); // 404 costs the same one query
      }
      const idle2 = await counters.snapshot();
      const commitsPerPoll = Counters.delta(idle1, idle2).commits / (2 * CALIBRATION_GETS);

      const stepResults: StepOverheadResult[] = [];
      for (const mode of ['in-process', 'process'] as const) {
        progress(`step overhead, ${mode} worker, ${STEP_RUNS} runs of ${STEPS} steps`);
        rss.phase(`step-overhead-${mode}`);
        stepResults.push(await measureStepOverhead(s, counters, cpu, statementTimer, { path: 'bench/steps40', mode, runs: STEP_RUNS, warmups: STEP_WARMUPS, commitsPerPoll }));
      }

      const throughputResults: ThroughputResult[] = [];
      for (const variant of THROUGHPUT_VARIANTS) {
        progress(`throughput, ${EXECUTIONS} executions, ${variant.label}`);
        rss.phase(`throughput-${variant.label}`);
        throughputResults.push(await measureThroughput(s, counters, cpu, { path: 'bench/one', variant, commitsPerPoll }));
      }

      progress('sequential loop, 100 items');
      rss.phase('loop');
      const shortLoop = await measureShortLoop(s, 'bench/loop');
      progress('hydration: building a ~10,000-event execution (a loop of 1,665 items)');
      rss.phase('hydration');
      const hydration = await measureHydration(s, { path: 'bench/loop-held' });
      rss.phase('batch-intake');
      const batch: BatchRunResult[] = await measureBatchIntake(s, db.url, batchFirst, progress, batchSearch);
      rss.phase('gateway');
      const gateway = await measureGatewayLatency(s.url, db.url, progress);
      rss.phase('webhook');
      const webhook = await measureWebhookAcceptance(s, progress, { cpu });
      rss.phase('trigger-lateness');
      const triggerLateness = await measureTriggerLateness(s, db.url, progress);
      rss.phase('timers');
      const timers = await measureTimerBurst(s, db.url, progress);
      rss.stop();

      const results = {
        generated_at: new Date().toISOString(),
        machine: {
          cpus: cpus().length,
          cpu_model: cpus()[0]?.model ?? 'unknown',
          total_memory_mib: Math.round(totalmem() / 1024 / 1024),
          platform: `${platform()} ${release()} ${arch()}`,
          node: process.version,
          postgresql: db.version,
          postgresql_source: db.source,
          postgresql_settings: db.settings,
          load_average_1m: { at_start: loadAtStart, at_end: loadAverage1m() },
        },
        targets: { ms_per_step_max: TARGET_MS_PER_STEP, steps_per_second_min: TARGET_STEPS_PER_SECOND },
        baselines: {
          commit_latency: latency,
          commit_throughput: commitRate,
        },
        calibration: { idle_interval_commits: idleCommits, commits_per_bench_poll: round(commitsPerPoll, 3) },
        step_overhead: stepResults.map((r) => ({ ...r, ratio_to_commit_latency: round(r.msPerStep.median / latency.msPerCommit, 2) })),
        throughput: throughputResults.map((r) => ({ ...r, ratio_to_commit_throughput: round(r.stepsPerSecond / commitRate.commitsPerSecond, 3) })),
        hydration,
        batch_intake: { settings: BATCH_ENV, runs: batch },
        gateway_latency: gateway,
        webhook_acceptance: webhook,
        schedule_fire_lateness: triggerLateness,
        timer_burst: timers,
        // A sequential loop item should cost what a step costs; it grows with the loop's list.
        loop_item_cost: [shortLoop, hydration.build],
        memory: {
          peak_rss_mib: round(rss.peakMiB, 1),
          peak_rss_mib_by_phase: Object.fromEntries(Object.entries(rss.peakByPhaseMiB).map(([k, v]) => [k, round(v, 1)])),
          sample_interval_ms: RSS_SAMPLE_INTERVAL_MS,
          note: 'RSS of this process: server, in-process workers and the bench together (worker processes are reported under step_overhead / not included)',
        },
        duration_s: round((performance.now() - T0) / 1000, 1),
      };
      await writeFile(RESULTS_FILE, JSON.stringify(results, null, 2) + '\n');

      const rows: Row[] = [];
      for (const r of stepResults) {
        rows.push({
          figure: `step overhead, ${r.worker} worker (median)`,
          value: `${fmt(r.msPerStep.median)} ms/step`,
          baseline: `${fmt(latency.msPerCommit, 3)} ms/commit`,
          ratio: `${fmt(r.msPerStep.median / latency.msPerCommit, 1)}x`,
          target: `<= ${TARGET_MS_PER_STEP} ms`,
          verdict: r.msPerStep.median <= TARGET_MS_PER_STEP ? 'ok' : 'MISSED',
          noise: noise(r.cpuPerStep.otherCores),
        });
        rows.push({
          figure: `step overhead, ${r.worker} worker (p90)`,
          value: `${fmt(r.msPerStep.p90)} ms/step`,
          baseline: `${fmt(latency.msPerCommit, 3)} ms/commit`,
          ratio: `${fmt(r.msPerStep.p90 / latency.msPerCommit, 1)}x`,
          target: `<= ${TARGET_MS_PER_STEP} ms`,
          verdict: r.msPerStep.p90 <= TARGET_MS_PER_STEP ? 'ok' : 'MISSED',
        });
      }
      for (const r of throughputResults) {
        rows.push({
          figure: `throughput, ${r.variant} (median of ${r.rounds})`,
          value: `${fmt(r.stepsPerSecond, 0)} steps/s`,
          baseline: `${fmt(commitRate.commitsPerSecond, 0)} commits/s`,
          ratio: `${fmt(r.stepsPerSecond / commitRate.commitsPerSecond, 2)}x`,
          target: `>= ${TARGET_STEPS_PER_SECOND}/s`,
          verdict: r.stepsPerSecond >= TARGET_STEPS_PER_SECOND ? 'ok' : 'MISSED',
          noise: noise(r.cpuPerStep.otherCores),
        });
      }
      for (const l of [shortLoop, hydration.build]) {
        rows.push({
          figure: `sequential loop of ${l.items} noop items, per item`,
          value: `${fmt(l.msPerItem)} ms/item`,
          baseline: `${fmt(stepResults[0].msPerStep.median)} ms/step`,
          ratio: `${fmt(l.msPerItem / stepResults[0].msPerStep.median, 1)}x`,
          target: '',
          verdict: '',
        });
      }
      rows.push(...hydrationRows(hydration));
      rows.push(...batchRows(batch));
      rows.push(...gatewayRows(gateway));
      rows.push(...webhookRows(webhook));
      rows.push({
        figure: `schedule fire lateness, ${triggerLateness.schedules} schedules every second (p99)`,
        value: `${fmt(triggerLateness.p99_ms, 1)} ms`,
        baseline: `p50 ${fmt(triggerLateness.p50_ms, 1)} ms, ${triggerLateness.fires}/${triggerLateness.expected_fires} fires`,
        ratio: '',
        target: `<= ${TRIGGER_TARGET_P99_MS} ms`,
        verdict: triggerLateness.p99_ms <= TRIGGER_TARGET_P99_MS && triggerLateness.fires === triggerLateness.expected_fires ? 'met' : 'MISSED',
      });
      rows.push(...timerRows(timers));
      rows.push({ figure: 'peak RSS (server + workers + bench)', value: `${fmt(rss.peakMiB, 0)} MiB`, baseline: '', ratio: '', target: '', verdict: '' });
      for (const r of stepResults) {
        const beyond = r.perStep.writeCommitsBeyondStarts;
        rows.push({ figure: `per sequential step, ${r.worker} worker: write commits, each run's start not counted`, value: fmt(beyond, 3), baseline: '', ratio: '', target: '<= 1 (issue 26)', verdict: beyond <= 1 ? 'met' : 'MISSED' });
        rows.push({
          figure: `per step, ${r.worker} worker: write commits / all commits / HTTP / routings (from memory)`,
          value: `${fmt(r.perStep.writeCommits)} / ${fmt(r.perStep.commits)} / ${fmt(r.perStep.httpRequests)} / ${fmt(r.perStep.routeTransactions, 3)} (${fmt(r.perStep.routedFromMemoryShare * 100, 0)}%)`,
          baseline: '',
          ratio: '',
          target: '',
          verdict: '',
        });
      }
      for (const r of throughputResults) {
        rows.push({
          figure: `per step, ${r.variant}: write commits / all commits / HTTP / routings (from memory)`,
          value: `${fmt(r.perStep.writeCommits)} / ${fmt(r.perStep.commits)} / ${fmt(r.perStep.httpRequests)} / ${fmt(r.perStep.routeTransactions, 3)} (${fmt(r.perStep.routedFromMemoryShare * 100, 0)}%)`,
          baseline: '',
          ratio: '',
          target: '',
          verdict: '',
        });
      }
      const b = stepResults[0].breakdownMsPerStep;
      const c = stepResults[0].cpuPerStep;
      const where = b
        ? [
            `one step, in-process worker (means, ms): ${fmt(b.step)} = worker side ${fmt(b.workerSide)} + report round trip ${fmt(b.reportRoundTrip)}`,
            `  report round trip = request (in process: the report's handler, no HTTP) + handler ${fmt(b.httpAndHandlerOutsideTransaction)} + routing transaction ${fmt(b.routeTransaction)}`,
            `  routing transaction = its statements ${fmt(b.statements)} + JavaScript around them ${fmt(b.jsInsideTransaction)}`,
            ...stepResults[0].statements.filter((x) => ROUTE_STATEMENT.test(x.statement)).map((x) => `    ${fmt(x.msPerStep, 3)} ms/step  ${fmt(x.perStep)}x ${fmt(x.msEach, 3)} ms  ${x.statement}`),
            `  CPU per step: Node ${fmt(c.nodeMs)} ms (event loop ${fmt(c.eventLoopUtilization * 100, 0)}% busy), PostgreSQL ${c.postgresMs === null ? '-' : fmt(c.postgresMs)} ms`,
          ].join('\n') + '\n'
        : '';
      process.stdout.write(
        `\n${formatTable(rows)}\n\n${where}\n${cpus().length} CPUs, Node ${process.version}, ${db.version.split(' on ')[0]}; ${results.duration_s} s; results in ${RESULTS_FILE}\n`,
      );
    } finally {
      await counters.close().catch(() => {});
      closeApiAgent();
      await s.svc.stop();
    }
  } finally {
    await db.stop();
  }
}

(only === undefined ? main() : ALONE[only]()).then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`bench failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
