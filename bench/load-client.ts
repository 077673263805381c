// The throughput load generator as its own process, as real clients are: the server's event loop
// does not also run the clients' HTTP. Protocol on stdio: `ready` once, then one JSON line each
// way per round:
//   stdin  {"path": "bench/one", "executions": 1000, "concurrency": 16}
//   stdout {"ids": [...], "startPhaseMs": 812.3}
// (its CPU is read from /proc by the bench, like the worker processes').
// Run by bench/throughput.ts: node bench/load-client.ts <server URL>
import { createInterface } from 'node:readline';
import { api, closeApiAgent } from './http-client.ts';

type Round = { path: string; executions: number; concurrency: number };

const serverUrl = process.argv[2];
if (!serverUrl) throw new Error('usage: node bench/load-client.ts <server URL>');

async function startOne(path: string): Promise<number> {
  const answer = await api(serverUrl, 'POST', '/api/run/playbook', { path, payload: {} });
  if (typeof answer.execution_id !== 'number') throw new Error(`POST /api/run/playbook: no execution_id in ${JSON.stringify(answer).slice(0, 300)}`);
  return answer.execution_id;
}

async function runRound(r: Round): Promise<void> {
  const t0 = performance.now();
  const ids: number[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: r.concurrency }, async () => {
      while (next < r.executions) {
        next++;
        ids.push(await startOne(r.path));
      }
    }),
  );
  process.stdout.write(JSON.stringify({ ids, startPhaseMs: performance.now() - t0 }) + '\n');
}

process.stdout.write('ready\n');
for await (const line of createInterface({ input: process.stdin })) {
  if (!line.trim()) continue;
  const parsed: unknown = JSON.parse(line);
  if (!parsed || typeof parsed !== 'object' || !('path' in parsed) || !('executions' in parsed) || !('concurrency' in parsed)) throw new Error(`bad round: ${line}`);
  const { path, executions, concurrency } = parsed;
  if (typeof path !== 'string' || typeof executions !== 'number' || typeof concurrency !== 'number') throw new Error(`bad round: ${line}`);
  await runRound({ path, executions, concurrency });
}
closeApiAgent();
