// A NATS that refuses the bus's login while a server runs (a password rotated on the NATS side,
// an account's credentials revoked and given back, an auth service down for a moment): the bus
// tries again, as it does after any lost connection (docs/scaling.md, "Running"), and carries the
// work again once NATS takes the login. nats.js gives up for good after the same login is refused
// twice in a row (its ignoreAuthErrorAbort), which left the server deaf to NATS until a restart:
// `bus: "disconnected"` for ever, its claimers waiting out their 5 s polls, the log saying only
// "reconnecting".
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { asWorker } from '../../helpers/auth.ts';
import { http } from '../../helpers/http.ts';
import { accepting, natsServerPath } from '../../helpers/nats-server.ts';
import { freePort } from '../../helpers/ports.ts';
import { ServerProcesses } from '../../helpers/server-processes.ts';
import { until } from '../../helpers/until.ts';

const PASSWORD = 'first-SECRET';
let bed: ServerProcesses;
let dir: string;
let nats: ChildProcess | undefined;
beforeAll(async () => {
  bed = await ServerProcesses.open({});
  dir = await mkdtemp(join(tmpdir(), 'svc-nats-login-'));
});
afterAll(async () => {
  await bed?.close();
  if (nats && nats.exitCode === null) {
    nats.kill('SIGTERM');
    await once(nats, 'exit');
  }
  await rm(dir, { recursive: true, force: true });
});

describe('a NATS that refuses the bus login while the server runs', () => {
  it('is tried again until it takes the login, then carries the work; the refusal is logged as such', async () => {
    const port = await freePort();
    const conf = join(dir, 'nats.conf');
    // A configuration file, so that a SIGHUP makes the running nats-server take another password.
    const configure = (password: string) => writeFile(conf, `listen: 127.0.0.1:${port}\njetstream { store_dir: "${join(dir, 'js')}" }\nauthorization { user: svc, password: "${password}" }\n`);
    await configure(PASSWORD);
    nats = spawn(natsServerPath(), ['-c', conf], { stdio: 'ignore' });
    await accepting(port);
    const url = `nats://svc:${PASSWORD}@127.0.0.1:${port}`;
    const off = { SVC_COMMAND_REAPER_ENABLED: 'false' };
    const a = await bed.server({ SVC_NATS_URL: url, ...off });
    const b = await bed.server({ SVC_NATS_URL: url, ...off });
    expect((await http(a.base, 'POST', '/api/catalog/playbook', { content: 'apiVersion: svc/v1\nmetadata: { name: l, path: login/again }\nworkflow:\n  - step: start\n    tool: { name: a, kind: noop }\n' })).status).toBe(201);
    const bus = async (base: string) => (await http(base, 'GET', '/api/health')).body.bus;

    // The password changes on the NATS side: both servers lose the connection and are refused.
    await configure('rotated-SECRET');
    nats.kill('SIGHUP');
    await until('both servers cut off', async () => (await bus(a.base)) === 'disconnected' && (await bus(b.base)) === 'disconnected', 10_000);
    // Refused for a while (nats.js gave up after its second refusal, a fraction of a second).
    await new Promise((r) => setTimeout(r, 2_000));
    expect(a.proc.output()).toContain("NATS refused the bus's login");
    expect(a.proc.output()).not.toContain(PASSWORD);

    // The old password is taken again: both buses come back.
    await configure(PASSWORD);
    nats.kill('SIGHUP');
    await until('both buses back', async () => (await bus(a.base)) === 'ok' && (await bus(b.base)) === 'ok', 10_000);

    // And carry the work: a claimer waiting 30 s on a is woken by a start on b's announcement (no reaper).
    await http(a.base, 'POST', '/api/worker/pool/register', { name: 'w-login', capacity: 1 }, asWorker);
    const t0 = performance.now();
    const claim = http(a.base, 'POST', '/api/worker/claim', { worker_id: 'w-login', max: 1, wait_ms: 30_000 }, asWorker);
    await new Promise((r) => setTimeout(r, 300));
    const id = (await http(b.base, 'POST', '/api/run/playbook', { path: 'login/again' })).body.execution_id;
    const got = await claim;
    expect(got.body.commands.map((c: { execution_id: number }) => c.execution_id)).toEqual([id]);
    expect(performance.now() - t0).toBeLessThan(5_000);
  }, 90_000);
});
