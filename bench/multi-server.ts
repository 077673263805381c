// `node bench/run.ts --only servers`: 1, 2 and 3 `svc server` processes on one PostgreSQL, with the
// PostgreSQL bus (LISTEN/NOTIFY) and with the NATS JetStream bus (SVC_NATS_URL, a nats-server of
// the run), issue 32. Per configuration and round: the servers (fresh processes), two `svc worker`
// processes of 4 slots each attached to the servers in turn (8 slots whatever the number of
// servers), a warm-up, then EXECUTIONS starts of a one-step playbook spread over the servers in
// turn by this process (16 in flight), until none runs. Rounds are interleaved (postgres 1, nats 1,
// postgres 2, ...). Figures: steps/s of the median round (database clock) and the CPU per execution
// of the servers, the workers, PostgreSQL and nats-server, from /proc. Then batch accept at 300
// batches/s (bench/batch-intake.ts) against a server with each bus. Writes bench/results-servers.json.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { cpus } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { freePort } from '../src/db/embedded.ts';
import { natsServerPath, startNatsServer } from '../test/helpers/nats-server.ts';
import { BATCH_ENV, measureBatchByBus, type BatchByBus } from './batch-by-bus.ts';
import { spawnSvc, waitForHealth, withTimeout, type SvcProcess } from '../test/helpers/process.ts';
import { startWorkerProcess, type WorkerProcess } from '../test/helpers/worker-process.ts';
import { BATCH_EXECUTIONS, BATCH_TARGET_RATE } from './batch-intake.ts';
import { CpuMeter, loadAverage1m, type CpuDelta } from './cpu.ts';
import { openBenchDatabase, type BenchDatabase } from './database.ts';
import { formatTable, type Row } from './report.ts';
import { request } from './http-client.ts';
import { api, sequentialPlaybook } from './service.ts';
import { median, round, sleep } from './stats.ts';

export const SERVERS_EXECUTIONS = 1_000;
export const SERVER_COUNTS = [1, 2, 3] as const;
export { BUSES, type Bus } from './buses.ts';
import { BUSES, type Bus } from './buses.ts';
/** Worker processes and their slots: the same 8 slots for every number of servers, worker i on server i mod N. */
export const WORKER_SLOTS = [4, 4];
const START_CONCURRENCY = 16;
/** Before each measured round, on the fresh processes (JIT, connections, pools): not counted. */
const WARMUP_EXECUTIONS = 200;
const ROUNDS = 3;
/** No further round starts when, at the pace of the last one, it would end past this (every configuration has as many rounds). */
const ROUNDS_BUDGET_MS = 180_000;
const BATCH_SECONDS = 10;
const POLL_MS = 20;
const ROUND_TIMEOUT_MS = 120_000;
const PATH = 'bench/one';
// The bench service's reaper setting (bench/service.ts): a sweep every second, unless the environment says otherwise.
const REAPER = { SVC_COMMAND_REAPER_INTERVAL_SECONDS: process.env.SVC_COMMAND_REAPER_INTERVAL_SECONDS ?? '1' };

type CpuParts = { servers: number; workers: number; postgres: number; nats: number; total: number };

export type ServersRound = {
  round: number;
  bus: Bus;
  servers: number;
  completed: number;
  /** Completed executions (one step each) over first start to last finish, database clock. */
  stepsPerSecond: number;
  /** Same, by the bench's clock: first POST sent to the poll that saw none running. */
  wallStepsPerSecond: number;
  spanMs: number;
  startPhaseMs: number;
  /** CPU (ms) per execution over the round's window; total = servers + workers + PostgreSQL + nats-server. */
  cpuMsPerExecution: CpuParts;
  /** Each server's CPU per execution (ms), in the order of the servers. */
  serverCpuMsPerExecution: number[];
  /** This process (the load client and the polls), apart. */
  loadClientCpuMsPerExecution: number;
  /** Machine CPU used by other processes meanwhile, in cores. */
  otherCores: number | null;
  loadAverage1m: number;
  /** Per execution, all servers: routing transactions, the share of them routed from memory, transactions that wrote. */
  perExecution: { routings: number; routedFromMemoryShare: number; writeCommits: number };
};

export type ServersConfiguration = {
  bus: Bus;
  servers: number;
  rounds: number;
  /** Median round. */
  stepsPerSecond: number;
  roundsStepsPerSecond: number[];
  /** All rounds' CPU over all rounds' executions. */
  cpuMsPerExecution: CpuParts;
  roundsCpuMsPerExecution: number[];
  /** Over all rounds. */
  perExecution: ServersRound['perExecution'];
  /** Against the same bus with one server. */
  stepsPerSecondVsOneServer: number;
  cpuVsOneServer: number;
};

export type ServersResult = {
  executions: number;
  warmupExecutions: number;
  startConcurrency: number;
  workerSlots: number[];
  roundsDone: number;
  configurations: ServersConfiguration[];
  rounds: ServersRound[];
  batch: { rate: number; seconds: number; executions: number; runs: BatchByBus[]; p99Ms: Record<Bus, number[]> };
};

function natsVersion(): string {
  try {
    return execFileSync(natsServerPath(), ['--version'], { encoding: 'utf8' }).trim();
  } catch {
    return 'unknown';
  }
}

/** N `svc server` processes on the database (the NATS bus with `natsUrl`, else PostgreSQL's), their URLs, and the worker processes attached to them in turn. */
async function startBed(db: BenchDatabase, key: string, n: number, natsUrl: string | undefined) {
  const ports = await Promise.all(Array.from({ length: n }, () => freePort()));
  const urls = ports.map((p) => `http://127.0.0.1:${p}`);
  const env = {
    SVC_DATABASE_URL: db.url,
    SVC_ENCRYPTION_KEY: key,
    SVC_DATA_DIR: join(db.dataDir, 'svc'),
    SVC_HOST: '127.0.0.1',
    ...REAPER,
    ...BATCH_ENV,
    ...(natsUrl ? { SVC_NATS_URL: natsUrl } : {}),
  };
  const servers: SvcProcess[] = ports.map((p) => spawnSvc(['server'], { ...env, SVC_PORT: String(p) }));
  const workers: WorkerProcess[] = [];
  const stop = async () => {
    await Promise.allSettled(workers.map((w) => w.stop()));
    await Promise.allSettled(
      servers.map(async (s) => {
        if (s.proc.exitCode === null && s.proc.signalCode === null) s.kill('SIGTERM');
        await withTimeout(s.exited, 20_000, 'server stop').catch(() => s.kill('SIGKILL'));
      }),
    );
  };
  try {
    await Promise.all(urls.map((u, i) => waitForHealth(`${u}/api/health`, 60_000).catch((err: unknown) => Promise.reject(new Error(`${String(err)}\n${servers[i].output()}`)))));
    workers.push(...(await Promise.all(WORKER_SLOTS.map((slots, i) => startWorkerProcess(urls[i % n], { concurrency: slots, startTimeoutMs: 60_000 })))));
  } catch (err) {
    await stop();
    throw err;
  }
  return { urls, serverPids: servers.map((s) => s.proc.pid!), workerPids: workers.map((w) => w.pid), stop };
}

/** `executions` starts of PATH from START_CONCURRENCY request loops, request k to server k mod N; the ids. */
async function startAll(urls: string[], executions: number): Promise<{ ids: number[]; startPhaseMs: number }> {
  const t0 = performance.now();
  const ids: number[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: START_CONCURRENCY }, async () => {
      while (next < executions) {
        const k = next++;
        const r = await api<{ execution_id: number }>(urls[k % urls.length], 'POST', '/api/run/playbook', { path: PATH, payload: {} });
        ids.push(r.execution_id);
      }
    }),
  );
  return { ids, startPhaseMs: performance.now() - t0 };
}

/** Routing transactions and those routed from memory, summed over the servers' GET /metrics. */
async function routings(urls: string[]): Promise<{ routes: number; fromMemory: number }> {
  let routes = 0;
  let fromMemory = 0;
  for (const u of urls) {
    const { body } = await request(u, 'GET', '/metrics');
    for (const line of String(body).split('\n')) {
      const value = Number(line.slice(line.lastIndexOf(' ') + 1));
      if (line.startsWith('svc_route_transaction_seconds_count')) routes += value;
      if (line.startsWith('svc_route_from_memory_total ')) fromMemory += value;
    }
  }
  return { routes, fromMemory };
}

/** Transaction ids assigned so far: transactions that wrote (this read assigns one). */
async function xid(client: pg.Client): Promise<number> {
  return Number((await client.query<{ x: string }>('SELECT pg_current_xact_id()::text AS x')).rows[0].x);
}

/** Waits until none of `ids` is unfinished (a read of the database: no server's CPU). */
async function untilFinished(client: pg.Client, ids: number[]): Promise<void> {
  const t0 = performance.now();
  for (;;) {
    const { rows } = await client.query<{ n: number }>('SELECT count(*)::int AS n FROM core.execution WHERE execution_id = ANY($1::bigint[]) AND finished_at IS NULL', [ids]);
    if (rows[0].n === 0) return;
    if (performance.now() - t0 > ROUND_TIMEOUT_MS) throw new Error(`${rows[0].n} of ${ids.length} executions still unfinished after ${ROUND_TIMEOUT_MS} ms`);
    await sleep(POLL_MS);
  }
}

/** One meter per consumer: PostgreSQL (with this process and the machine), each server, the workers, nats-server. */
function meters(db: BenchDatabase, serverPids: number[], workerPids: number[], natsPid: number | undefined) {
  const withPids = (pids: number[]) => {
    const m = new CpuMeter(null);
    for (const p of pids) m.extraPids.add(p);
    return m;
  };
  const all = { postgres: new CpuMeter(db.postmasterPid), servers: serverPids.map((p) => withPids([p])), workers: withPids(workerPids), nats: withPids(natsPid ? [natsPid] : []) };
  const snapshot = () => ({ postgres: all.postgres.snapshot(), servers: all.servers.map((m) => m.snapshot()), workers: all.workers.snapshot(), nats: all.nats.snapshot() });
  type Snap = ReturnType<typeof snapshot>;
  const delta = (a: Snap, b: Snap) => {
    const pgd: CpuDelta = CpuMeter.delta(a.postgres, b.postgres);
    const servers = a.servers.map((s, i) => CpuMeter.delta(s, b.servers[i]).workerProcessMs);
    const workers = CpuMeter.delta(a.workers, b.workers).workerProcessMs;
    const nats = CpuMeter.delta(a.nats, b.nats).workerProcessMs;
    const postgres = pgd.postgresMs ?? 0;
    const serversMs = servers.reduce((x, y) => x + y, 0);
    const other = pgd.systemBusyMs === null ? null : pgd.systemBusyMs - serversMs - workers - nats - postgres - pgd.nodeMs;
    return { wallMs: pgd.wallMs, servers, serversMs, workers, nats, postgres, loadClient: pgd.nodeMs, otherCores: other === null ? null : round(Math.max(0, other) / pgd.wallMs, 2) };
  };
  return { snapshot, delta };
}

async function runRound(db: BenchDatabase, key: string, client: pg.Client, bus: Bus, n: number, roundNo: number, executions: number, progress: (m: string) => void): Promise<ServersRound> {
  const nats = bus === 'nats' ? await startNatsServer(undefined, { jetstream: true }) : undefined;
  try {
    const tStart = performance.now();
    const bed = await startBed(db, key, n, nats?.url);
    progress(`  servers and workers up in ${Math.round(performance.now() - tStart)} ms`);
    try {
      // The playbook, registered through the first server the run starts (the catalog is in the database).
      const registered = await client.query('SELECT 1 FROM core.catalog WHERE path = $1 LIMIT 1', [PATH]);
      if (!registered.rowCount) await api(bed.urls[0], 'POST', '/api/catalog/playbook', { content: sequentialPlaybook(PATH, 1) });
      const tWarm = performance.now();
      const warm = await startAll(bed.urls, WARMUP_EXECUTIONS);
      await untilFinished(client, warm.ids);
      progress(`  warm-up of ${WARMUP_EXECUTIONS} in ${Math.round(performance.now() - tWarm)} ms`);
      await sleep(200);
      const m = meters(db, bed.serverPids, bed.workerPids, nats?.pid);
      const load = loadAverage1m();
      const routes0 = await routings(bed.urls);
      const xid0 = await xid(client);
      const c0 = m.snapshot();
      const t0 = performance.now();
      const { ids, startPhaseMs } = await startAll(bed.urls, executions);
      await untilFinished(client, ids);
      const wallMs = performance.now() - t0;
      const d = m.delta(c0, m.snapshot());
      // The polls' reads assign no transaction id; the second xid read assigns one.
      const writes = (await xid(client)) - xid0 - 1;
      const routes1 = await routings(bed.urls);
      const { rows } = await client.query<{ first_ms: number; last_ms: number; completed: number }>(
        `SELECT extract(epoch FROM min(started_at)) * 1000 AS first_ms, extract(epoch FROM max(finished_at)) * 1000 AS last_ms,
                count(*) FILTER (WHERE status = 'completed')::int AS completed
           FROM core.execution WHERE execution_id = ANY($1::bigint[])`,
        [ids],
      );
      const done = rows[0].completed;
      if (done !== executions) throw new Error(`${bus} bus, ${n} servers: ${done} of ${executions} executions completed`);
      const spanMs = rows[0].last_ms - rows[0].first_ms;
      const per = (ms: number) => round(ms / done, 3);
      const r: ServersRound = {
        round: roundNo,
        bus,
        servers: n,
        completed: done,
        stepsPerSecond: round(done / (spanMs / 1000), 0),
        wallStepsPerSecond: round(done / (wallMs / 1000), 0),
        spanMs: round(spanMs, 1),
        startPhaseMs: round(startPhaseMs, 1),
        cpuMsPerExecution: { servers: per(d.serversMs), workers: per(d.workers), postgres: per(d.postgres), nats: per(d.nats), total: per(d.serversMs + d.workers + d.postgres + d.nats) },
        serverCpuMsPerExecution: d.servers.map(per),
        loadClientCpuMsPerExecution: per(d.loadClient),
        otherCores: d.otherCores,
        loadAverage1m: load,
        perExecution: {
          routings: round((routes1.routes - routes0.routes) / done, 3),
          routedFromMemoryShare: round((routes1.fromMemory - routes0.fromMemory) / Math.max(1, routes1.routes - routes0.routes), 3),
          writeCommits: round(writes / done, 3),
        },
      };
      progress(`  ${r.stepsPerSecond} steps/s, ${r.cpuMsPerExecution.total} ms CPU per execution (servers ${r.cpuMsPerExecution.servers}, workers ${r.cpuMsPerExecution.workers}, PostgreSQL ${r.cpuMsPerExecution.postgres}, nats ${r.cpuMsPerExecution.nats}), other load ${r.otherCores} cores; per execution ${r.perExecution.routings} routings (${Math.round(r.perExecution.routedFromMemoryShare * 100)}% from memory), ${r.perExecution.writeCommits} write commits`);
      return r;
    } finally {
      const tStop = performance.now();
      await bed.stop();
      progress(`  stopped in ${Math.round(performance.now() - tStop)} ms`);
    }
  } finally {
    await nats?.close();
  }
}

function summarise(rounds: ServersRound[]): ServersConfiguration[] {
  const out: ServersConfiguration[] = [];
  for (const bus of BUSES) {
    for (const n of SERVER_COUNTS) {
      const rs = rounds.filter((r) => r.bus === bus && r.servers === n);
      if (!rs.length) continue;
      const done = rs.reduce((a, r) => a + r.completed, 0);
      const sum = (f: (p: CpuParts) => number) => round(rs.reduce((a, r) => a + f(r.cpuMsPerExecution) * r.completed, 0) / done, 3);
      out.push({
        bus,
        servers: n,
        rounds: rs.length,
        stepsPerSecond: round(median(rs.map((r) => r.stepsPerSecond)), 0),
        roundsStepsPerSecond: rs.map((r) => r.stepsPerSecond),
        cpuMsPerExecution: { servers: sum((p) => p.servers), workers: sum((p) => p.workers), postgres: sum((p) => p.postgres), nats: sum((p) => p.nats), total: sum((p) => p.total) },
        roundsCpuMsPerExecution: rs.map((r) => r.cpuMsPerExecution.total),
        perExecution: {
          routings: round(rs.reduce((a, r) => a + r.perExecution.routings * r.completed, 0) / done, 3),
          routedFromMemoryShare: round(rs.reduce((a, r) => a + r.perExecution.routedFromMemoryShare * r.perExecution.routings * r.completed, 0) / Math.max(1e-9, rs.reduce((a, r) => a + r.perExecution.routings * r.completed, 0)), 3),
          writeCommits: round(rs.reduce((a, r) => a + r.perExecution.writeCommits * r.completed, 0) / done, 3),
        },
        stepsPerSecondVsOneServer: 1,
        cpuVsOneServer: 1,
      });
    }
  }
  for (const c of out) {
    const one = out.find((o) => o.bus === c.bus && o.servers === 1);
    if (!one) continue;
    c.stepsPerSecondVsOneServer = round(c.stepsPerSecond / one.stepsPerSecond, 2);
    c.cpuVsOneServer = round(c.cpuMsPerExecution.total / one.cpuMsPerExecution.total, 2);
  }
  return out;
}

export type ServersOptions = { rounds?: number; executions?: number; batchSeconds?: number };

/** The whole run on one embedded PostgreSQL (or SVC_BENCH_DATABASE_URL's server). */
export async function measureServers(db: BenchDatabase, progress: (m: string) => void, opts: ServersOptions = {}): Promise<ServersResult> {
  const maxRounds = opts.rounds ?? ROUNDS;
  const executions = opts.executions ?? SERVERS_EXECUTIONS;
  const key = randomBytes(32).toString('base64');
  const client = new pg.Client({ connectionString: db.url });
  await client.connect();
  const rounds: ServersRound[] = [];
  let roundsDone = 0;
  try {
    const t0 = performance.now();
    for (let r = 1; r <= maxRounds; r++) {
      const started = performance.now();
      for (const n of SERVER_COUNTS) {
        for (const bus of BUSES) {
          progress(`round ${r}/${maxRounds}: ${bus} bus, ${n} server${n > 1 ? 's' : ''}, ${executions} one-step executions`);
          rounds.push(await runRound(db, key, client, bus, n, r, executions, progress));
        }
      }
      roundsDone = r;
      const took = performance.now() - started;
      if (r < maxRounds && performance.now() - t0 + took > ROUNDS_BUDGET_MS) {
        progress(`stopping after ${r} round(s): another would end past ${ROUNDS_BUDGET_MS / 1000} s`);
        break;
      }
    }
  } finally {
    await client.end();
  }
  const seconds = opts.batchSeconds ?? BATCH_SECONDS;
  const batchRuns = await measureBatchByBus(db, seconds, progress);
  return {
    executions,
    warmupExecutions: WARMUP_EXECUTIONS,
    startConcurrency: START_CONCURRENCY,
    workerSlots: WORKER_SLOTS,
    roundsDone,
    configurations: summarise(rounds),
    rounds,
    batch: {
      rate: BATCH_TARGET_RATE,
      seconds,
      executions: BATCH_EXECUTIONS,
      runs: batchRuns,
      p99Ms: { postgres: batchRuns.filter((b) => b.bus === 'postgres').map((b) => b.result.ackMs.p99), nats: batchRuns.filter((b) => b.bus === 'nats').map((b) => b.result.ackMs.p99) },
    },
  };
}

/** `--only servers`: the figures into `file`, `rows` of them on stdout. */
export async function runServersAlone(file: string, progress: (m: string) => void, opts: ServersOptions, rows: (r: ServersResult) => Row[]): Promise<void> {
  const t0 = performance.now();
  const loadAtStart = loadAverage1m();
  progress('starting PostgreSQL');
  const db = await openBenchDatabase();
  try {
    const result = await measureServers(db, progress, opts);
    const results = {
      generated_at: new Date().toISOString(),
      machine: {
        cpus: cpus().length,
        cpu_model: cpus()[0]?.model ?? 'unknown',
        node: process.version,
        postgresql: db.version,
        postgresql_source: db.source,
        nats_server: natsVersion(),
        load_average_1m: { at_start: loadAtStart, at_end: loadAverage1m() },
      },
      settings: { ...REAPER, ...BATCH_ENV },
      servers: result,
      duration_s: round((performance.now() - t0) / 1000, 1),
    };
    await writeFile(file, JSON.stringify(results, null, 2) + '\n');
    process.stdout.write(`\n${formatTable(rows(result))}\n\n${cpus().length} CPUs, Node ${process.version}, ${db.version.split(' on ')[0]}; load average ${loadAtStart} -> ${results.machine.load_average_1m.at_end}; ${results.duration_s} s; results in ${file}\n`);
  } finally {
    await db.stop();
  }
}
