// The batch intake load generator, a process of its own (the server's event loop does not also
// run the clients' HTTP). Open loop: batch i is sent at t0 + i / rate whatever became of the
// earlier ones, as independent workers would send them. Protocol on stdio: `ready` once, then
//   stdin  {"rate": 300, "seconds": 30, "warmupSeconds": 3, "eventsPerBatch": 10, "worker": "bench-load", "targets": [{"execution_id", "command_id", "attempt"}], "headers": {...}}
//   stdout {"sent", "latenciesMs": [...202s...], "warmupLatenciesMs": [...], "errors": {"503 ack_timeout": n}, "accepted": [{"request_id", "event_ids"}], "sendLagP99Ms": p99 lag of sends}
// The first `warmupSeconds` of the schedule are the warm-up: sent and answered like the rest
// (their batches are in `accepted`, their errors in `errors`), their latencies kept apart.
// Run by bench/batch-intake.ts: node bench/batch-load.ts <server URL>
import { createInterface } from 'node:readline';
import { EVENT } from '../machines/event-types.ts';
import { closeApiAgent, request } from './http-client.ts';
import { quantile } from './stats.ts';

type Target = { execution_id: number; command_id: number; attempt: number };
type Round = { rate: number; seconds: number; warmupSeconds: number; eventsPerBatch: number; worker: string; targets: Target[]; headers?: Record<string, string> };

const serverUrl = process.argv[2];
if (!serverUrl) throw new Error('usage: node bench/batch-load.ts <server URL>');
const runId = `${process.pid}-${Date.now()}`;

function isRound(x: unknown): x is Round {
  if (!x || typeof x !== 'object') return false;
  const r = x as Record<string, unknown>;
  return typeof r.rate === 'number' && typeof r.seconds === 'number' && typeof r.warmupSeconds === 'number' && typeof r.eventsPerBatch === 'number' && typeof r.worker === 'string' && Array.isArray(r.targets);
}

/** Batch i: progress reports of the command held on one of the targets, in turn. */
function batchOf(r: Round, i: number) {
  const t = r.targets[i % r.targets.length];
  const events = Array.from({ length: r.eventsPerBatch }, (_, k) => ({
    event_type: EVENT.callDone,
    command_id: t.command_id,
    attempt: t.attempt,
    context: { task: 't', kind: 'noop', batch: i, item: k },
  }));
  return { execution_id: t.execution_id, worker_id: r.worker, events };
}

// Connections the load opens before a round's clock starts (the agent keeps them alive): a new
// connection's first request also pays for the handshake and the server's connection set-up,
// which measured 70-100 ms on the first batches of a cold round; the run measures the accept.
const WARM_CONNECTIONS = 32;

/** Opens `n` keep-alive connections at once, as clients that have been running would hold. */
async function openConnections(n: number): Promise<void> {
  await Promise.all(Array.from({ length: n }, () => request(serverUrl, 'GET', '/health')));
}

async function runRound(r: Round): Promise<void> {
  await openConnections(WARM_CONNECTIONS);
  const warmup = Math.round(r.rate * r.warmupSeconds);
  const total = warmup + Math.round(r.rate * r.seconds);
  const intervalMs = 1000 / r.rate;
  const latencies: number[] = [];
  const warmupLatencies: number[] = [];
  const lags: number[] = [];
  const errors: Record<string, number> = {};
  const accepted: { request_id: string; event_ids: number[] }[] = [];
  const inFlight: Promise<void>[] = [];
  const t0 = performance.now();
  for (let i = 0; i < total; i++) {
    const due = t0 + i * intervalMs;
    const wait = due - performance.now();
    if (wait > 1) await new Promise((ok) => setTimeout(ok, wait));
    const sentAt = performance.now();
    lags.push(sentAt - due);
    const body = batchOf(r, i);
    inFlight.push(
      request(serverUrl, 'POST', '/api/events/batch', body, { ...r.headers, 'idempotency-key': `${runId}-${r.rate}-${i}` }).then(
        (res) => {
          const ms = performance.now() - sentAt;
          const b = res.body as { request_id?: unknown; event_ids?: unknown; detail?: { code?: unknown } };
          if (res.status === 202 && typeof b.request_id === 'string' && Array.isArray(b.event_ids)) {
            (i < warmup ? warmupLatencies : latencies).push(ms);
            accepted.push({ request_id: b.request_id, event_ids: b.event_ids.map(Number) });
          } else {
            const key = `${res.status} ${typeof b.detail?.code === 'string' ? b.detail.code : ''}`.trim();
            errors[key] = (errors[key] ?? 0) + 1;
          }
        },
        (err: unknown) => {
          const key = `network ${err instanceof Error ? err.message : String(err)}`;
          errors[key] = (errors[key] ?? 0) + 1;
        },
      ),
    );
  }
  await Promise.all(inFlight);
  process.stdout.write(
    JSON.stringify({ sent: total, spanMs: performance.now() - t0, latenciesMs: latencies, warmupLatenciesMs: warmupLatencies, errors, accepted, sendLagP99Ms: quantile(lags, 0.99) }) + '\n',
  );
}

process.stdout.write('ready\n');
for await (const line of createInterface({ input: process.stdin })) {
  if (!line.trim()) continue;
  const parsed: unknown = JSON.parse(line);
  if (!isRound(parsed)) throw new Error(`bad round: ${line.slice(0, 200)}`);
  await runRound(parsed);
}
closeApiAgent();
