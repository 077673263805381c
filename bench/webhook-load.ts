// The webhook delivery load generator, a process of its own (the server's event loop does not also
// run the senders' HTTP). Open loop: delivery i is sent at t0 + i / rate whatever became of the
// earlier ones, as GitHub would send them; each is a ~1 KB push event with its own delivery id,
// signed as GitHub signs (X-Hub-Signature-256), the signatures made before the clock starts.
// Protocol on stdio (the secret never on the command line):
//   stdin  {"rate": 200, "seconds": 20, "warmupSeconds": 3, "path": "bench/hook", "name": "github", "secret": "..."}
//   stdout {"sent", "spanMs", "latenciesMs": [...202s after the warm-up...], "warmupLatenciesMs", "statuses": {"202": n}, "duplicates", "sendLagP99Ms"}
// Run by bench/webhook-acceptance.ts: node bench/webhook-load.ts <server URL>
import { createHmac } from 'node:crypto';
import http from 'node:http';
import { text } from 'node:stream/consumers';
import { quantile } from './stats.ts';

type Round = { rate: number; seconds: number; warmupSeconds: number; path: string; name: string; secret: string };

const serverUrl = process.argv[2];
if (!serverUrl) throw new Error('usage: node bench/webhook-load.ts <server URL>');
// Connections opened before the clock starts (kept alive): the run measures the delivery, not TCP set-up.
const WARM_CONNECTIONS = 32;
const agent = new http.Agent({ keepAlive: true });
const runId = `${process.pid}-${Date.now()}`;

function isRound(x: unknown): x is Round {
  if (!x || typeof x !== 'object') return false;
  const r: Partial<Record<keyof Round, unknown>> = x;
  return typeof r.rate === 'number' && typeof r.seconds === 'number' && typeof r.warmupSeconds === 'number' && typeof r.path === 'string' && typeof r.name === 'string' && typeof r.secret === 'string';
}

/** A push event of about 1 KB, as GitHub sends one (fewer fields). */
function pushEvent(i: number): string {
  const sha = (n: number) => createHmac('sha1', 'bench').update(`${runId}-${n}`).digest('hex');
  return JSON.stringify({
    ref: 'refs/heads/main',
    before: sha(i - 1),
    after: sha(i),
    repository: { id: 1000 + (i % 50), full_name: `bench/repo${i % 50}`, private: false, html_url: `https://github.com/bench/repo${i % 50}`, default_branch: 'main' },
    pusher: { name: 'octocat', email: 'octocat@example.com' },
    sender: { login: 'octocat', id: 1, type: 'User' },
    head_commit: { id: sha(i), message: `bench commit ${i}: a message of some length, as commit messages are`, timestamp: new Date().toISOString(), author: { name: 'Octo Cat', email: 'octocat@example.com' } },
    commits: [{ id: sha(i), message: `bench commit ${i}`, added: ['src/a.ts'], removed: [], modified: ['README.md', 'src/b.ts'] }],
  });
}

function post(path: string, body: string | undefined, headers: Record<string, string>, method = 'POST'): Promise<{ status: number; body: string }> {
  return new Promise((ok, fail) => {
    const req = http.request(new URL(path, serverUrl), { method, agent, headers: body === undefined ? headers : { ...headers, 'content-length': Buffer.byteLength(body) } }, (res) => {
      text(res).then((t) => ok({ status: res.statusCode ?? 0, body: t }), fail);
    });
    req.on('error', fail);
    req.end(body);
  });
}

async function runRound(r: Round): Promise<void> {
  await Promise.all(Array.from({ length: WARM_CONNECTIONS }, () => post('/health', undefined, {}, 'GET')));
  const warmup = Math.round(r.rate * r.warmupSeconds);
  const total = warmup + Math.round(r.rate * r.seconds);
  const deliveries = Array.from({ length: total }, (_, i) => {
    const body = pushEvent(i);
    const headers = {
      'content-type': 'application/json',
      'user-agent': 'GitHub-Hookshot/bench',
      'x-github-event': 'push',
      'x-github-delivery': `${runId}-${i}`,
      'x-hub-signature-256': `sha256=${createHmac('sha256', r.secret).update(body).digest('hex')}`,
    };
    return { body, headers };
  });
  const url = `/api/hooks/${r.path}/${r.name}`;
  const intervalMs = 1000 / r.rate;
  const latencies: number[] = [];
  const warmupLatencies: number[] = [];
  const lags: number[] = [];
  const statuses: Record<string, number> = {};
  let duplicates = 0;
  const inFlight: Promise<void>[] = [];
  const t0 = performance.now();
  for (let i = 0; i < total; i++) {
    const due = t0 + i * intervalMs;
    const wait = due - performance.now();
    if (wait > 1) await new Promise((ok) => setTimeout(ok, wait));
    const sentAt = performance.now();
    lags.push(sentAt - due);
    const d = deliveries[i];
    inFlight.push(
      post(url, d.body, d.headers).then(
        (res) => {
          const ms = performance.now() - sentAt;
          statuses[res.status] = (statuses[res.status] ?? 0) + 1;
          if (res.status !== 202) return;
          (i < warmup ? warmupLatencies : latencies).push(ms);
          if (res.body.includes('"duplicate":true')) duplicates++;
        },
        (err: unknown) => {
          const key = `network ${err instanceof Error ? err.message : String(err)}`;
          statuses[key] = (statuses[key] ?? 0) + 1;
        },
      ),
    );
  }
  await Promise.all(inFlight);
  process.stdout.write(JSON.stringify({ sent: total, spanMs: performance.now() - t0, latenciesMs: latencies, warmupLatenciesMs: warmupLatencies, statuses, duplicates, sendLagP99Ms: quantile(lags, 0.99) }) + '\n');
}

const input = await text(process.stdin);
const parsed: unknown = JSON.parse(input);
if (!isRound(parsed)) throw new Error('bad round on stdin');
await runRound(parsed);
agent.destroy();
