// Webhook acceptance: GitHub-style signed deliveries at WEBHOOK_RATE per second for WEBHOOK_SECONDS
// (open loop, from a load process of its own: bench/webhook-load.ts) to a webhook trigger on the
// bench's server; the latency of each delivery from its send to its 202 (signature checked, fire
// recorded and execution started in one transaction). No worker runs: the executions stay
// running, as the schedule bench's do.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { text } from 'node:stream/consumers';
import { CpuMeter } from './cpu.ts';
import { fmt, noise, type Row } from './report.ts';
import { api, type BenchService } from './service.ts';
import { quantile, round } from './stats.ts';

export const WEBHOOK_RATE = 200;
export const WEBHOOK_SECONDS = 20;
export const WEBHOOK_WARMUP_SECONDS = 3;
export const WEBHOOK_TARGET_P99_MS = 20;
const PATH = 'bench/hook';
const NAME = 'github';

export type WebhookAcceptanceResult = {
  rate: number;
  seconds: number;
  deliveries: number;
  accepted: number;
  statuses: Record<string, number>;
  duplicates: number;
  executions_started: number;
  p50_ms: number;
  p90_ms: number;
  p99_ms: number;
  max_ms: number;
  achieved_rate: number;
  send_lag_p99_ms: number;
  /** CPU per delivery over the whole run (warm-up included), in ms: the server, PostgreSQL, the load process. */
  cpu_ms_per_delivery: { server: number; postgres: number | null; load_client: number };
  /** Cores busy with other work on the machine meanwhile (noise), null where unknown. */
  other_cores: number | null;
};

type LoadAnswer = { sent: number; spanMs: number; latenciesMs: number[]; warmupLatenciesMs: number[]; statuses: Record<string, number>; duplicates: number; sendLagP99Ms: number };

/** Registers the trigger and its credential, sends the deliveries, and checks that each started one execution. */
export async function measureWebhookAcceptance(
  s: BenchService,
  progress: (msg: string) => void,
  opts: { cpu: CpuMeter; rate?: number; seconds?: number; path?: string },
): Promise<WebhookAcceptanceResult> {
  const { cpu, rate = WEBHOOK_RATE, seconds = WEBHOOK_SECONDS, path = PATH } = opts;
  const secret = randomBytes(32).toString('base64url');
  const credential = `${path.replaceAll('/', '_')}_github`;
  await api(s.url, 'POST', '/api/credentials', { name: credential, type: 'custom', data: { secret } });
  await s.register(`apiVersion: svc/v1
metadata: { name: hook, path: ${path} }
workload: { repo: none, after: none }
triggers:
  - name: ${NAME}
    kind: webhook
    auth: ${credential}
    signature: github
    delivery_id: "{{ request.headers['x-github-delivery'] }}"
    payload: { repo: "{{ request.body.repository.full_name }}", after: "{{ request.body.after }}" }
workflow:
  - step: start
    tool: { name: t, kind: noop }
`);
  progress(`webhook acceptance: ${rate} deliveries/s for ${seconds} s (+${WEBHOOK_WARMUP_SECONDS} s warm-up)`);
  const child = spawn(process.execPath, [join(import.meta.dirname, 'webhook-load.ts'), s.url], { stdio: ['pipe', 'pipe', 'inherit'] });
  const exited = new Promise<number | null>((ok) => child.once('exit', ok));
  if (child.pid !== undefined) cpu.clientPids.add(child.pid);
  const before = cpu.snapshot();
  child.stdin.end(JSON.stringify({ rate, seconds, warmupSeconds: WEBHOOK_WARMUP_SECONDS, path, name: NAME, secret }));
  const out = await text(child.stdout);
  const used = CpuMeter.delta(before, cpu.snapshot());
  if (child.pid !== undefined) cpu.clientPids.delete(child.pid);
  const code = await exited;
  if (code !== 0) throw new Error(`webhook load process exited with ${code}`);
  const load: LoadAnswer = JSON.parse(out);
  const { rows } = await s.svc.deps.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM core.trigger_fire WHERE path = $1 AND name = $2 AND outcome = 'started'`, [path, NAME]);
  const accepted = load.statuses['202'] ?? 0;
  const xs = load.latenciesMs;
  return {
    rate,
    seconds,
    deliveries: load.sent,
    accepted,
    statuses: load.statuses,
    duplicates: load.duplicates,
    executions_started: rows[0].n,
    p50_ms: round(quantile(xs, 0.5), 2),
    p90_ms: round(quantile(xs, 0.9), 2),
    p99_ms: round(quantile(xs, 0.99), 2),
    max_ms: round(Math.max(...xs), 2),
    achieved_rate: round(load.sent / (load.spanMs / 1000), 1),
    send_lag_p99_ms: round(load.sendLagP99Ms, 2),
    cpu_ms_per_delivery: {
      server: round(used.nodeMs / load.sent, 3),
      postgres: used.postgresMs === null ? null : round(used.postgresMs / load.sent, 3),
      load_client: round(used.loadClientMs / load.sent, 3),
    },
    other_cores: used.otherMs === null ? null : round(used.otherMs / used.wallMs, 2),
  };
}

/** The table rows of a webhook acceptance run. */
export function webhookRows(r: WebhookAcceptanceResult): Row[] {
  const exact = r.accepted === r.deliveries && r.executions_started === r.deliveries && r.duplicates === 0;
  return [
    {
      figure: `webhook acceptance at ${r.rate} deliveries/s (p99)`,
      value: `${fmt(r.p99_ms)} ms`,
      baseline: `p50 ${fmt(r.p50_ms)} ms, max ${fmt(r.max_ms)} ms`,
      ratio: '',
      target: `<= ${WEBHOOK_TARGET_P99_MS} ms`,
      verdict: r.p99_ms <= WEBHOOK_TARGET_P99_MS && exact ? 'ok' : 'MISSED',
      noise: noise(r.other_cores),
    },
    {
      figure: 'webhook CPU per delivery: server / PostgreSQL / load client',
      value: `${fmt(r.cpu_ms_per_delivery.server)} / ${r.cpu_ms_per_delivery.postgres === null ? '-' : fmt(r.cpu_ms_per_delivery.postgres)} / ${fmt(r.cpu_ms_per_delivery.load_client)} ms`,
      baseline: '',
      ratio: '',
      target: '',
      verdict: '',
    },
    { figure: 'webhook deliveries: sent / 202 / executions started', value: `${r.deliveries} / ${r.accepted} / ${r.executions_started}`, baseline: '', ratio: '', target: 'all equal', verdict: exact ? 'ok' : 'MISSED' },
  ];
}
