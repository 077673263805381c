// Scratch: cold hydration without a stored snapshot, timed by part.
import { hydrate } from '../actors/hydrate.ts';
import { HotSnapshots } from '../actors/hot-snapshots.ts';
import { readUnit } from '../src/db/unit-read.ts';
import { EXECUTION_MACHINE_VERSION } from '../machines/execution.machine.ts';
import { openBenchDatabase } from './database.ts';
import { sequentialLoopPlaybook, startBenchService, closeApiAgent } from './service.ts';
import { sleep } from './stats.ts';

const db0 = await openBenchDatabase();
const s = await startBenchService(db0.url, db0.dataDir);
await s.register(sequentialLoopPlaybook('bench/loop', { hold: true }));
const w = await s.worker(1);
const id = await s.run('bench/loop', { items: Array.from({ length: 1665 }, (_, i) => i) });
const db = s.svc.deps.db;
for (;;) {
  const { rows } = await db.query<{ waits: boolean }>(`SELECT EXISTS (SELECT 1 FROM core.wait w WHERE w.execution_id = $1) AS waits`, [id]);
  if (rows[0].waits) break;
  await sleep(50);
}
await w.stop();
await db.query(`UPDATE core.execution SET machine_version = machine_version - 1000 WHERE execution_id = $1`, [id]);
const cache = s.svc.deps.cache;
const N = Number(process.env.N ?? 30);
const t = { read: [] as number[], hyd: [] as number[] };
for (let i = 0; i < N; i++) {
  let t0 = performance.now();
  await readUnit(db, [id], [], new Map(), EXECUTION_MACHINE_VERSION);
  t.read.push(performance.now() - t0);
  t0 = performance.now();
  await hydrate(db, cache, new HotSnapshots(), [id], [], 'all');
  t.hyd.push(performance.now() - t0);
}
const med = (a: number[]) => a.slice().sort((x, y) => x - y)[Math.floor(a.length / 2)].toFixed(1);
console.log(JSON.stringify({ readMs: med(t.read), hydrateMs: med(t.hyd), readMin: Math.min(...t.read).toFixed(1), hydMin: Math.min(...t.hyd).toFixed(1) }));
await s.svc.stop();
await closeApiAgent();
await db0.stop();
