// The throughput load generator as its own process, as real clients are: the server's event loop
// does not also run the clients' HTTP. Protocol on stdio, one JSON line each way per round:
//   stdin  {"path": "bench/one", "executions": 1000, "concurrency": 16}
//   stdout {"ids": [...], "startPhaseMs": 812.3, "cpuMs": 410.2}
// Run by bench/throughput.ts: node bench/load-client.ts <server URL>
import http from 'node:http';
import { createInterface } from 'node:readline';

type Round = { path: string; executions: number; concurrency: number };

const serverUrl = process.argv[2];
if (!serverUrl) throw new Error('usage: node bench/load-client.ts <server URL>');
const agent = new http.Agent({ keepAlive: true });

function startOne(path: string): Promise<number> {
  const body = JSON.stringify({ path, payload: {} });
  return new Promise((ok, fail) => {
    const req = http.request(
      new URL('/api/run/playbook', serverUrl),
      { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => {
          if (res.statusCode !== 200) return fail(new Error(`POST /api/run/playbook: HTTP ${res.statusCode} ${text.slice(0, 300)}`));
          const parsed: unknown = JSON.parse(text);
          const id = parsed && typeof parsed === 'object' && 'execution_id' in parsed ? parsed.execution_id : undefined;
          if (typeof id !== 'number') return fail(new Error(`POST /api/run/playbook: no execution_id in ${text.slice(0, 300)}`));
          ok(id);
        });
        res.on('error', fail);
      },
    );
    req.on('error', fail);
    req.end(body);
  });
}

async function runRound(r: Round): Promise<void> {
  const cpu0 = process.cpuUsage();
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
  const startPhaseMs = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  process.stdout.write(JSON.stringify({ ids, startPhaseMs, cpuMs: (cpu.user + cpu.system) / 1000 }) + '\n');
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
agent.destroy();
