// Batch accept at 300 batches/s with each bus (issue 32), for `node bench/run.ts --only servers`
// (bench/multi-server.ts): the bench's in-process server with and without SVC_NATS_URL, runs
// interleaved, with the CPU per accepted batch of the server, PostgreSQL and nats-server.
import { readFileSync } from 'node:fs';
import { startNatsServer } from '../test/helpers/nats-server.ts';
import { BATCH_EXECUTIONS, BATCH_TARGET_RATE, measureBatchIntake, type BatchRunResult } from './batch-intake.ts';
import { CpuMeter, loadAverage1m } from './cpu.ts';
import type { BenchDatabase } from './database.ts';
import { BUSES, type Bus } from './buses.ts';
import { closeApiAgent, startBenchService } from './service.ts';
import { round, sleep } from './stats.ts';

const BATCH_RUNS_PER_BUS = 2;
/** The batch processors of the measured server (as in bench/run.ts). */
export const BATCH_ENV = { SVC_BATCH_ACCEPT_WORKERS: '1' };

export type BatchByBus = {
  bus: Bus;
  run: number;
  result: BatchRunResult;
  /** Over the run (its set-up, warm-up and drain included) per accepted batch: the in-process server (this process), PostgreSQL, nats-server. */
  cpuMsPerBatch: { server: number; postgres: number; nats: number; total: number };
  loadProcessMsPerBatch: number;
  otherCores: number | null;
  loadAverage1m: number;
};

/** CPU (ms) of this process's reaped children (cutime + cstime): the batch load process, once it has exited. */
function reapedChildrenCpuMs(): number {
  const st = readFileSync('/proc/self/stat', 'utf8');
  const f = st.slice(st.lastIndexOf(')') + 2).split(' ');
  return (Number(f[13]) + Number(f[14])) * 10; // USER_HZ = 100, as in bench/cpu.ts
}

/** Batch accept at the target rate against the bench's in-process server with each bus, interleaved. */
export async function measureBatchByBus(db: BenchDatabase, seconds: number, progress: (m: string) => void): Promise<BatchByBus[]> {
  const runs: BatchByBus[] = [];
  for (let run = 1; run <= BATCH_RUNS_PER_BUS; run++) {
    for (const bus of BUSES) {
      const nats = bus === 'nats' ? await startNatsServer(undefined, { jetstream: true }) : undefined;
      try {
        const s = await startBenchService(db.url, db.dataDir, { ...BATCH_ENV, ...(nats ? { SVC_NATS_URL: nats.url } : {}) });
        try {
          progress(`batch accept, ${bus} bus, run ${run}/${BATCH_RUNS_PER_BUS}`);
          const cpu = new CpuMeter(db.postmasterPid);
          if (nats) cpu.extraPids.add(nats.pid);
          const load = loadAverage1m();
          const c0 = cpu.snapshot();
          const reaped0 = reapedChildrenCpuMs();
          const [result] = await measureBatchIntake(s, db.url, { rate: BATCH_TARGET_RATE, seconds, executions: BATCH_EXECUTIONS }, progress);
          const d = CpuMeter.delta(c0, cpu.snapshot());
          // The load process (bench/batch-load.ts, killed at the end of the run) is counted once reaped, apart from other load.
          await sleep(300);
          const loadMs = reapedChildrenCpuMs() - reaped0;
          const per = (ms: number) => round(ms / Math.max(1, result.accepted), 3);
          runs.push({
            bus,
            run,
            result,
            cpuMsPerBatch: { server: per(d.nodeMs), postgres: per(d.postgresMs ?? 0), nats: per(d.workerProcessMs), total: per(d.nodeMs + (d.postgresMs ?? 0) + d.workerProcessMs) },
            loadProcessMsPerBatch: per(loadMs),
            otherCores: d.otherMs === null ? null : round(Math.max(0, d.otherMs - loadMs) / d.wallMs, 2),
            loadAverage1m: load,
          });
        } finally {
          closeApiAgent();
          await s.svc.stop();
        }
      } finally {
        await nats?.close();
      }
    }
  }
  return runs;
}

