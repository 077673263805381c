// SVC_NATS_URL as operators write it (src/bus/nats-connect.ts): a NATS that asks for a login
// written in the URL (user and password, or a token) carries the work, and no log line of the
// server holds the login; a login refused, and a NATS that does not answer, fail the start with
// exit 1 naming the server (never the password), as a start fails when PostgreSQL does not answer.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { http } from '../../helpers/http.ts';
import { startNatsServer, type NatsServer } from '../../helpers/nats-server.ts';
import { freePort } from '../../helpers/ports.ts';
import { spawnSvc, withTimeout } from '../../helpers/process.ts';
import { ServerProcesses } from '../../helpers/server-processes.ts';
import { until } from '../../helpers/until.ts';

const PASSWORD = 'p@ss/w0rd-SECRET';
const TOKEN = 't0ken-SECRET';
let bed: ServerProcesses;
const started: NatsServer[] = [];
beforeAll(async () => {
  bed = await ServerProcesses.open({ SVC_LOG_LEVEL: 'debug' });
});
afterEach(async () => {
  await bed?.stopAll();
  for (const n of started.splice(0)) await n.close();
});
afterAll(async () => {
  await bed?.close();
});

const playbook = (path: string) => `apiVersion: svc/v1\nmetadata: { name: n, path: ${path} }\nworkflow:\n  - step: start\n    tool: { name: a, kind: noop }\n`;

async function natsWith(auth: { user: string; password: string } | { token: string }): Promise<NatsServer> {
  const n = await startNatsServer(auth, { jetstream: true });
  started.push(n);
  return n;
}

/** A server started with SVC_NATS_URL that is expected to fail: its exit code, output and time taken. */
async function failedStart(natsUrl: string): Promise<{ code: number | null; output: string; ms: number }> {
  const t0 = performance.now();
  const p = spawnSvc(['server'], { SVC_DATABASE_URL: bed.database.url, SVC_ENCRYPTION_KEY: randomBytes(32).toString('base64'), SVC_HOST: '127.0.0.1', SVC_PORT: String(await freePort()), SVC_NATS_URL: natsUrl });
  const code = await withTimeout(p.exited, 40_000, 'the failed start').catch((err: unknown) => {
    p.kill('SIGKILL');
    throw err;
  });
  return { code, output: p.output(), ms: performance.now() - t0 };
}

describe('SVC_NATS_URL with a login', () => {
  it('carries the work on a NATS that asks for a user and password given in the URL, and logs neither', async () => {
    const nats = await natsWith({ user: 'svc', password: PASSWORD });
    const url = `nats://svc:${encodeURIComponent(PASSWORD)}@127.0.0.1:${nats.port}`;
    const a = await bed.server({ SVC_NATS_URL: url });
    await bed.worker(a.base, 2);
    expect((await http(a.base, 'POST', '/api/catalog/playbook', { content: playbook('login/user') })).status).toBe(201);
    const id = (await http(a.base, 'POST', '/api/run/playbook', { path: 'login/user' })).body.execution_id;
    await until('completed', async () => (await bed.db.query(`SELECT status FROM core.execution WHERE execution_id = $1`, [id])).rows[0]?.status === 'completed', 20_000);
    // Lost and back: the lines the bus logs then name no login either.
    await nats.restart();
    await until('the bus back', () => a.proc.output().includes('NATS connection back'), 20_000);
    expect(a.proc.output()).not.toContain('w0rd-SECRET');
    expect(a.proc.output()).not.toContain(encodeURIComponent(PASSWORD));
    // Nor does the server's environment hold it: moved out at start like SVC_DATABASE_URL.
    expect(readFileSync(`/proc/${a.proc.proc.pid}/environ`, 'utf8')).not.toContain('w0rd-SECRET');
  }, 90_000);

  it('carries the work on a NATS that asks for a token given as the URL user', async () => {
    const nats = await natsWith({ token: TOKEN });
    const a = await bed.server({ SVC_NATS_URL: `nats://${TOKEN}@127.0.0.1:${nats.port}` });
    await bed.worker(a.base, 1);
    expect((await http(a.base, 'POST', '/api/catalog/playbook', { content: playbook('login/token') })).status).toBe(201);
    const id = (await http(a.base, 'POST', '/api/run/playbook', { path: 'login/token' })).body.execution_id;
    await until('completed', async () => (await bed.db.query(`SELECT status FROM core.execution WHERE execution_id = $1`, [id])).rows[0]?.status === 'completed', 20_000);
    expect(a.proc.output()).not.toContain(TOKEN);
  }, 60_000);

  it('fails the start at once with exit 1 when NATS refuses the login, naming the server and not the password', async () => {
    const nats = await natsWith({ user: 'svc', password: PASSWORD });
    const { code, output, ms } = await failedStart(`nats://svc:wrong-${encodeURIComponent(PASSWORD)}@127.0.0.1:${nats.port}`);
    expect(code).toBe(1);
    expect(output).toContain(`NATS at 127.0.0.1:${nats.port} (SVC_NATS_URL) refused the bus's login`);
    expect(output).not.toContain('w0rd-SECRET');
    expect(ms).toBeLessThan(20_000);
  }, 60_000);

  it('fails the start with exit 1 when NATS does not answer, saying so while it waits, instead of hanging silently', async () => {
    const port = await freePort();
    const { code, output, ms } = await failedStart(`nats://svc:${encodeURIComponent(PASSWORD)}@127.0.0.1:${port}`);
    expect(code).toBe(1);
    expect(output).toContain(`bus: NATS at 127.0.0.1:${port} not reachable yet`);
    expect(output).toContain(`NATS at 127.0.0.1:${port} (SVC_NATS_URL) did not answer within 10 s`);
    expect(output).not.toContain('w0rd-SECRET');
    expect(ms).toBeLessThan(30_000);
  }, 60_000);

  it('fails the start with exit 1 on a NATS without JetStream (nats-server without -js), naming the server and what to turn on', async () => {
    // nats.js said only "jetstream is not enabled": nothing named the setting, the server or the fix.
    const nats = await startNatsServer();
    started.push(nats);
    const { code, output } = await failedStart(`nats://svc:${encodeURIComponent(PASSWORD)}@127.0.0.1:${nats.port}`);
    expect(code).toBe(1);
    expect(output).toContain(`NATS at 127.0.0.1:${nats.port} (SVC_NATS_URL) has JetStream off`);
    expect(output).toContain('-js');
    expect(output).not.toContain('w0rd-SECRET');
  }, 60_000);

  it('refuses an SVC_NATS_URL it cannot take apart as a setting (exit 78), quoting none of it', async () => {
    const { code, output } = await failedStart(`nats://svc:${encodeURIComponent(PASSWORD)}@[::1`);
    expect(code).toBe(78);
    expect(output).toContain('invalid SVC_NATS_URL');
    expect(output).not.toContain('w0rd-SECRET');
  }, 30_000);

  it('stops on SIGTERM while NATS is away (exit 0), instead of waiting for it to come back', async () => {
    const nats = await startNatsServer(undefined, { jetstream: true });
    started.push(nats);
    const a = await bed.server({ SVC_NATS_URL: nats.url });
    await nats.close();
    await until('the bus lost', () => a.proc.output().includes('NATS connection lost'), 20_000);
    const t0 = performance.now();
    a.proc.kill('SIGTERM');
    expect(await withTimeout(a.proc.exited, 15_000, 'the stop').catch((err: unknown) => (a.proc.kill('SIGKILL'), String(err)))).toBe(0);
    expect(performance.now() - t0).toBeLessThan(10_000);
  }, 60_000);
});
