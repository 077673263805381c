// Two deployments (two databases) on one NATS, as staging and production often share a NATS
// cluster (src/bus/nats.ts, docs/scaling.md "The bus"): with a namespace each
// (SVC_NATS_NAMESPACE), each one's announcements wake its own servers' claimers only. With one
// work-queue stream for every deployment, an announcement was taken by whichever server pulled
// first, often the other deployment's, whose claimers found nothing, while the worker that could
// run the command waited out its claim's wait. Without a namespace the names are DESIGN.md's.
import { connect } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { asWorker } from '../../helpers/auth.ts';
import { http } from '../../helpers/http.ts';
import { jetStreamServer } from '../../helpers/nats-server.ts';
import { ServerProcesses } from '../../helpers/server-processes.ts';
import { until } from '../../helpers/until.ts';

/** A claim answered by an announcement, not by its own wait running out. */
const PROMPT_MS = 2_000;
/** A claim's wait when nothing wakes it: well past PROMPT_MS. */
const CLAIM_WAIT_MS = 10_000;
const ROUNDS = 8;

let nats: Awaited<ReturnType<typeof jetStreamServer>>;
let ours: ServerProcesses;
let theirs: ServerProcesses;
beforeAll(async () => {
  nats = await jetStreamServer();
  ours = await ServerProcesses.open({ SVC_NATS_URL: nats.url, SVC_NATS_NAMESPACE: 'production' });
  theirs = await ServerProcesses.open({ SVC_NATS_URL: nats.url, SVC_NATS_NAMESPACE: 'staging' });
}, 60_000);
afterAll(async () => {
  await ours?.close();
  await theirs?.close();
  await nats?.close();
});

const playbook = `apiVersion: svc/v1
metadata: { name: one, path: shared/one }
workflow:
  - step: start
    tool: { name: a, kind: noop }
`;

/** Keeps a claim of an idle worker pool waiting on `base` until `stop` aborts (each one ends empty, or when woken). */
async function idleClaimer(base: string, stop: AbortSignal): Promise<void> {
  await http(base, 'POST', '/api/worker/pool/register', { name: 'w-idle', capacity: 1 }, asWorker);
  while (!stop.aborted) await http(base, 'POST', '/api/worker/claim', { worker_id: 'w-idle', max: 1, wait_ms: 1_000 }, asWorker);
}

describe('deployments sharing one NATS', () => {
  it("wakes a deployment's own claimers, however busy the other deployment's claimers are", async () => {
    const a = await ours.server();
    const b = await ours.server();
    const c = await theirs.server();
    expect((await http(a.base, 'POST', '/api/catalog/playbook', { content: playbook })).status).toBe(201);
    await http(a.base, 'POST', '/api/worker/pool/register', { name: 'w-ours', capacity: ROUNDS }, asWorker);
    const stop = new AbortController();
    const idle = idleClaimer(c.base, stop.signal);
    try {
      const waits: number[] = [];
      for (let i = 0; i < ROUNDS; i++) {
        const t0 = performance.now();
        const claim = http(a.base, 'POST', '/api/worker/claim', { worker_id: 'w-ours', max: 1, wait_ms: CLAIM_WAIT_MS }, asWorker);
        // The claim waits (its server pulls announcements) before the start on the other server.
        await new Promise((r) => setTimeout(r, 300));
        const id = (await http(b.base, 'POST', '/api/run/playbook', { path: 'shared/one' })).body.execution_id;
        const got = await claim;
        waits.push(Math.round(performance.now() - t0));
        expect(got.body.commands.map((x: { execution_id: number }) => x.execution_id)).toEqual([id]);
      }
      // Every claim was woken by its own deployment's announcement.
      expect(waits.filter((ms) => ms > PROMPT_MS), `claim waits (ms): ${waits.join(', ')}`).toEqual([]);
    } finally {
      stop.abort();
      await idle;
      await ours.stopAll();
      await theirs.stopAll();
    }
  }, 180_000);

  it('announces on svc.cmd.<partition> (DESIGN.md) without a namespace, on svc.<namespace>.cmd.<partition> with one', async () => {
    const plain = await ServerProcesses.open({ SVC_NATS_URL: nats.url });
    const watcher = await connect({ servers: nats.url.replace(/^nats:\/\//, '') });
    try {
      const heard: string[] = [];
      const sub = watcher.subscribe('svc.>', { callback: (_err, m) => void heard.push(m.subject) });
      await watcher.flush();
      for (const [bed, name] of [[plain, 'plain'], [ours, 'production']] as const) {
        const server = await bed.server();
        expect((await http(server.base, 'POST', '/api/catalog/playbook', { content: playbook })).status).toBe(201);
        const id = Number((await http(server.base, 'POST', '/api/run/playbook', { path: 'shared/one' })).body.execution_id);
        const subject = name === 'plain' ? `svc.cmd.${id % 16}` : `svc.production.cmd.${id % 16}`;
        await until(`an announcement on ${subject}`, () => heard.includes(subject) || undefined, 10_000);
        await bed.stopAll();
      }
      sub.unsubscribe();
    } finally {
      await watcher.close();
      await plain.close();
    }
  }, 120_000);
});
