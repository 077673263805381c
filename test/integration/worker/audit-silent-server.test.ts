// A server that takes a worker's connection and never answers on it (SIGSTOPped, hung, or one of
// several behind a load balancer that went quiet) held the worker's request for ever: its
// registration waited silently, and a report sent on such a connection never came back, so the
// command's result sat in the worker while its claim ran out. A worker's request now gives up
// after its answer timeout (beyond the claim wait) and is sent again, on a new connection.
import { connect, createServer, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../../src/log.ts';
import { Worker } from '../../../src/worker/worker.ts';
import { startTestStack, type TestStack } from '../../helpers/stack.ts';
import { until } from '../../helpers/until.ts';

const ANSWER_TIMEOUT_MS = 500;
const CLAIM_WAIT_MS = 200;

/** A TCP path to `port` whose connections can be made silent: accepted, and nothing crosses them again. */
class QuietPath {
  readonly #server: Server;
  readonly #open = new Set<Socket>();
  #silent = false;
  port = 0;

  constructor(target: number | null) {
    this.#server = createServer((client) => {
      client.on('error', () => {});
      if (this.#silent || target === null) {
        client.resume(); // read and dropped: the request went, no answer comes
        return;
      }
      const upstream = connect(target, '127.0.0.1');
      upstream.on('error', () => {});
      for (const s of [client, upstream]) {
        this.#open.add(s);
        s.on('close', () => this.#open.delete(s));
      }
      client.pipe(upstream).pipe(client);
    });
  }

  async listen(): Promise<void> {
    await new Promise<void>((ok) => this.#server.listen(0, '127.0.0.1', ok));
    const address = this.#server.address();
    if (address === null || typeof address === 'string') throw new Error('no port');
    this.port = address.port;
  }

  /** Every connection open now goes quiet for good; while `silent`, new ones get no answer either. */
  silence(silent: boolean): void {
    this.#silent = silent;
    if (silent) for (const s of this.#open) s.pause();
  }

  close(): Promise<void> {
    for (const s of this.#open) s.destroy();
    return new Promise((ok) => this.#server.close(() => ok()));
  }
}

let s: TestStack;
const workers: Worker[] = [];
const paths: QuietPath[] = [];
beforeAll(async () => {
  s = await startTestStack({ workers: 0 });
});
afterAll(async () => {
  for (const w of workers) await w.stop().catch(() => {});
  for (const p of paths) await p.close();
  await s?.close();
});

/** A worker (not in-process) reaching the server through `path`, its warnings kept. */
function workerThrough(path: QuietPath, warnings: string[]): Worker {
  const log = createLogger('warn');
  const warn = log.warn.bind(log);
  log.warn = ((obj: unknown, msg?: string) => {
    warnings.push(`${typeof msg === 'string' ? msg : ''} ${JSON.stringify(obj)}`);
    return warn(obj as object, msg as string);
  }) as typeof log.warn;
  const worker = new Worker({ serverUrl: `http://127.0.0.1:${path.port}`, token: s.workerToken, concurrency: 2, env: {}, log, claimWaitMs: CLAIM_WAIT_MS, answerTimeoutMs: ANSWER_TIMEOUT_MS });
  workers.push(worker);
  return worker;
}

describe('a worker whose server takes connections and never answers', () => {
  it('does not wait for ever to register: it says so and tries again', async () => {
    const path = new QuietPath(null);
    paths.push(path);
    await path.listen();
    const warnings: string[] = [];
    const worker = workerThrough(path, warnings);
    void worker.start().catch(() => {});
    await until('a registration given up and tried again', () => warnings.filter((w) => w.includes('not reachable yet')).length >= 2, 10_000, 50);
    expect(warnings.join('\n')).toContain('TimeoutError');
    await worker.stop();
  });

  it('sends a report that got no answer again, on a new connection: the execution completes once', async () => {
    await s.register(`
apiVersion: svc/v1
kind: Playbook
metadata: { name: quiet, path: worker/quiet }
workflow:
  - step: only
    tool: { name: t, kind: shell, command: "sleep 1; echo done" }
`);
    const path = new QuietPath(Number(new URL(s.url).port));
    paths.push(path);
    await path.listen();
    const warnings: string[] = [];
    const worker = workerThrough(path, warnings);
    await worker.start();
    const id = await s.run('worker/quiet');
    const claimed = async () => (await s.deps.db.query('SELECT 1 FROM core.command WHERE execution_id = $1 AND claimed_at IS NOT NULL', [id])).rows.length > 0;
    await until('its command claimed', claimed, 10_000, 20);
    // The connections the worker holds go quiet while its command runs; new ones are answered
    // again before the command ends, so only a request that gives up and goes again gets through.
    path.silence(true);
    await new Promise((r) => setTimeout(r, 300));
    path.silence(false);
    expect((await s.wait(id, 20_000)).status).toBe('completed');
    const types = (await s.events(id)).map((e) => e.event_type);
    expect(types.filter((t) => t === 'command.completed')).toHaveLength(1);
    expect(types.filter((t) => t === 'command.issued')).toHaveLength(1);
  });
});
