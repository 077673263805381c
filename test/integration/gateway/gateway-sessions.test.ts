// Gateways that share their sessions (issue 32 item 2, docs/gateway.md "Sessions"): two gateways
// on one database behind a load balancer with no stickiness (a real `svc gateway` process, running
// as a database role with only the grants the docs give, and one in this process), a real OpenID
// provider and server, people signed in in Chromium. A login started at one gateway ends at the
// other; a session made by one opens the other; restarts keep people signed in; logout and `svc
// gateway revoke` end sessions everywhere; expiry is the row's, so every gateway refuses an expired
// session; the table holds no cookie value and no token in the clear.
import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import type { Browser, BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { Db } from '../../../src/db/db.ts';
import { createLogger } from '../../../src/log.ts';
import { sweepGatewaySessions } from '../../../src/periodic/gateway-session-sweep.ts';
import { launchBrowser } from '../../helpers/browser.ts';
import { gatewayEnv, startTestGateway, TEST_GATEWAY_SECRET, type TestGateway } from '../../helpers/gateway.ts';
import { http } from '../../helpers/http.ts';
import { startTestProvider, type TestProvider } from '../../helpers/oidc-provider.ts';
import { freePort } from '../../helpers/ports.ts';
import { runSvc, spawnSvc, waitForOutput, withTimeout, type SvcProcess } from '../../helpers/process.ts';
import { startTestStack, type TestStack } from '../../helpers/stack.ts';

let idp: TestProvider;
let stack: TestStack;
let browser: Browser;
let lb: Server;
let pub: string; // the load balancer: the one public origin of both gateways
let env: Record<string, string>;
let gatewayRole: string;
let gatewayDbUrl: string; // the process gateway's login: only the grants docs/gateway.md gives
let a: TestGateway; // in this process
let b: { proc: SvcProcess; url: string }; // `svc gateway`, a process of its own
/** The load balancer sends the provider's redirect back (/auth/callback) to b, everything else to a. */
const backend = (path: string): string => (path.startsWith('/auth/callback') ? b.url : a.url);

async function adminQuery(url: string, sql: string): Promise<void> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    await c.query(sql);
  } finally {
    await c.end();
  }
}

async function startProcessGateway(): Promise<{ proc: SvcProcess; url: string }> {
  const proc = spawnSvc(['gateway', '--port', '0'], { ...env, SVC_DATABASE_URL: gatewayDbUrl });
  await waitForOutput(proc, 'svc gateway listening on', 20_000);
  return { proc, url: /listening on (http:\/\/\S+),/.exec(proc.output())![1] };
}

async function stopProcessGateway(g: { proc: SvcProcess }): Promise<void> {
  g.proc.kill('SIGTERM');
  expect(await withTimeout(g.proc.exited, 10_000, 'gateway exit')).toBe(0);
}

beforeAll(async () => {
  const port = await freePort();
  pub = `http://127.0.0.1:${port}`;
  idp = await startTestProvider([pub]);
  stack = await startTestStack({ workers: 0, env: { SVC_AUTH: 'gateway', SVC_GATEWAY_SECRET: TEST_GATEWAY_SECRET } });
  env = {
    ...gatewayEnv(stack, idp, TEST_GATEWAY_SECRET),
    SVC_OIDC_SCOPES: 'openid profile email roles',
    GATEWAY_PUBLIC_URL: pub,
  };
  // A gateway's own database login, with the grants docs/gateway.md lists and nothing else.
  const suffix = randomBytes(4).toString('hex');
  gatewayRole = `svc_gateway_test_${suffix}`;
  const password = `pw-${randomBytes(12).toString('hex')}`;
  const database = new URL(stack.databaseUrl).pathname.slice(1);
  await adminQuery(inject('adminDatabaseUrl'), `CREATE ROLE ${gatewayRole} LOGIN PASSWORD '${password}'`);
  await adminQuery(
    stack.databaseUrl,
    `GRANT CONNECT ON DATABASE ${database} TO ${gatewayRole};
     GRANT USAGE ON SCHEMA core TO ${gatewayRole};
     GRANT SELECT, INSERT, UPDATE, DELETE ON core.gateway_session, core.gateway_login TO ${gatewayRole};`,
  );
  const u = new URL(stack.databaseUrl);
  u.username = gatewayRole;
  u.password = password;
  gatewayDbUrl = u.toString();

  a = await startTestGateway(env);
  b = await startProcessGateway();
  lb = createServer((req, res) => {
    const target = new URL(backend(req.url ?? '/'));
    const up = request({ host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers }, (r) => {
      res.writeHead(r.statusCode ?? 502, r.headers);
      r.pipe(res);
    });
    up.on('error', () => res.writeHead(502).end());
    req.pipe(up);
  });
  await new Promise<void>((ok) => lb.listen(port, '127.0.0.1', ok));
  browser = await launchBrowser();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  lb?.closeAllConnections();
  await new Promise<void>((ok) => (lb ? lb.close(() => ok()) : ok()));
  if (b) await stopProcessGateway(b).catch(() => {});
  await a?.close();
  await stack?.close();
  await idp?.close();
  if (gatewayRole) await adminQuery(inject('adminDatabaseUrl'), `DROP ROLE IF EXISTS ${gatewayRole}`);
});

/** Signs `login` in through the load balancer in a fresh browser; the session cookie's value. */
async function signIn(login: string): Promise<{ context: BrowserContext; sid: string }> {
  const context = await browser.newContext();
  const page = await context.newPage();
  await page.goto(`${pub}/auth/login?return_to=/auth/me`, { waitUntil: 'domcontentloaded' });
  for (let i = 0; i < 4 && !page.url().startsWith(pub); i++) {
    if (await page.locator('input[name=login]').count()) {
      await page.fill('input[name=login]', login);
      await page.fill('input[name=password]', 'any-password');
    }
    await Promise.all([page.waitForNavigation({ waitUntil: 'domcontentloaded' }), page.click('button[type=submit]')]);
  }
  // /auth/login was a's, the callback b's, and /auth/me (where it ends) a's again.
  expect(page.url()).toBe(`${pub}/auth/me`);
  expect(JSON.parse((await page.textContent('body')) ?? '')).toMatchObject({ sub: login });
  const sid = (await context.cookies(pub)).find((c) => c.name === 'svc_session')?.value;
  expect(sid).toMatch(/^[A-Za-z0-9_-]{43}$/);
  return { context, sid: sid! };
}

/** GET /auth/me at `base` with the session cookie: its status. */
const me = async (base: string, sid: string): Promise<number> => (await http(base, 'GET', '/auth/me', undefined, { cookie: `svc_session=${sid}` })).status;

describe('gateways that share sessions', () => {
  it('signs in through one gateway and is signed in at the other (the login itself crossing gateways)', async () => {
    const { context, sid } = await signIn('alice');
    for (const base of [a.url, b.url]) {
      const who = await http(base, 'GET', '/auth/me', undefined, { cookie: `svc_session=${sid}` });
      expect(who.status).toBe(200);
      expect(who.body).toEqual({ sub: 'alice', name: 'User alice', email: 'alice@example.test', roles: ['admin'] });
      // The server takes the identity either gateway asserts.
      expect((await http(base, 'GET', '/api/executions', undefined, { cookie: `svc_session=${sid}` })).status).toBe(200);
    }
    await context.close();
  }, 60_000);

  it('stores neither the cookie value nor a token in the clear', async () => {
    const { context, sid } = await signIn('olivia');
    const row = (await stack.deps.db.query<{ id_hash: string; id_token: string; text: string }>(
      `SELECT id_hash, id_token, to_jsonb(s)::text AS text FROM core.gateway_session s WHERE sub = 'olivia'`,
    )).rows;
    expect(row).toHaveLength(1);
    expect(row[0].id_hash).toBe(createHash('sha256').update(sid).digest('hex'));
    expect(row[0].text).not.toContain(sid);
    expect(row[0].id_token).toMatch(/^v1\./); // sealed
    // No JWT: its header and payload, each `eyJ…` (base64url of `{"`), joined by a dot. `eyJ`
    // alone turns up by chance in a sealed token's ciphertext (~1 run in 200).
    expect(row[0].text).not.toMatch(/eyJ[A-Za-z0-9_-]{10,}\.eyJ/);

    // A login in progress is sealed too: neither its cookie nor its state is readable in the row; taken, it is gone.
    const started = await fetch(`${pub}/auth/login`, { redirect: 'manual' });
    const state = new URL(started.headers.get('location')!).searchParams.get('state')!;
    const loginCookie = /svc_login=([^;]+)/.exec(started.headers.get('set-cookie') ?? '')![1];
    const logins = (await stack.deps.db.query<{ id_hash: string; text: string }>('SELECT id_hash, to_jsonb(l)::text AS text FROM core.gateway_login l')).rows;
    const mine = logins.find((l) => l.id_hash === createHash('sha256').update(loginCookie).digest('hex'));
    expect(mine).toBeDefined();
    expect(mine!.text).not.toContain(state);
    expect(mine!.text).not.toContain(loginCookie);

    const logs = [...a.logs, b.proc.output(), ...stack.logs].join('\n');
    expect(logs).not.toContain(sid);
    expect(logs).not.toContain(loginCookie);
    await context.close();
  }, 60_000);

  it('keeps people signed in through a restart of either gateway', async () => {
    const { context, sid } = await signIn('victor');
    await stopProcessGateway(b);
    b = await startProcessGateway();
    expect(await me(b.url, sid)).toBe(200);
    await a.close();
    a = await startTestGateway(env);
    expect(await me(a.url, sid)).toBe(200);
    // And through the load balancer, as the browser goes.
    const page = await context.newPage();
    await page.goto(`${pub}/auth/me`);
    expect(JSON.parse((await page.textContent('body')) ?? '').sub).toBe('victor');
    await context.close();
  }, 60_000);

  it('logs out on one gateway and is signed out on the other', async () => {
    const { context, sid } = await signIn('alice');
    const cookie = { cookie: `svc_session=${sid}`, origin: pub };
    // Used at b first: a gateway that kept what it read would still let it in after the logout.
    expect(await me(b.url, sid)).toBe(200);
    // The session was made by b (the callback); a ends it, and opens its sealed ID token for the provider's logout.
    const out = await http(a.url, 'POST', '/auth/logout', undefined, cookie);
    expect(out.status).toBe(200);
    expect(out.body.logged_out).toBe(true);
    expect(new URL(out.body.redirect).searchParams.get('id_token_hint')).toMatch(/^eyJ/);
    expect(await me(b.url, sid)).toBe(401);
    expect(await me(a.url, sid)).toBe(401);
    expect((await http(b.url, 'GET', '/api/executions', undefined, cookie)).status).toBe(401);
    await context.close();
  }, 60_000);

  it('ends every session of a person on every gateway with `svc gateway revoke`', async () => {
    const first = await signIn('nora');
    const second = await signIn('nora');
    const other = await signIn('victor');
    const run = await runSvc(['gateway', 'revoke', 'nora'], { SVC_DATABASE_URL: stack.databaseUrl, SVC_LOG_LEVEL: 'warn' });
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('ended 2 sessions of nora');
    for (const base of [a.url, b.url]) {
      expect(await me(base, first.sid)).toBe(401);
      expect(await me(base, second.sid)).toBe(401);
      expect(await me(base, other.sid)).toBe(200);
    }
    expect((await runSvc(['gateway', 'revoke', 'nora'], { SVC_DATABASE_URL: stack.databaseUrl, SVC_LOG_LEVEL: 'warn' })).stdout).toContain('nora has no session');
    expect((await runSvc(['gateway', 'revoke'], { SVC_DATABASE_URL: stack.databaseUrl })).code).toBe(2);
    for (const s of [first, second, other]) await s.context.close();
  }, 90_000);

  it('refuses `svc gateway revoke` with no database to reach (78), and starts none', async () => {
    // Without SVC_DATABASE_URL or a running `svc start`, a revoke that made a database of its own
    // would end no one's session yet say "has no session", exit 0.
    const dir = await mkdtemp(join(tmpdir(), 'svc-revoke-'));
    try {
      const run = await runSvc(['gateway', 'revoke', 'nora'], { SVC_DATA_DIR: dir, SVC_LOG_LEVEL: 'warn' });
      expect(run.code).toBe(78);
      expect(run.stdout).toBe('');
      expect(run.stderr).toContain('SVC_DATABASE_URL is required');
      expect(await readdir(dir)).toEqual([]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 60_000);

  it('refuses an expired session on every gateway (idle, and past its maximum age however used), and sweeps its row', async () => {
    // Lifetimes shorter than the settings allow (60 s at least), for the test's sake.
    // Wide enough apart that a loaded machine's slow answer (a second or two) decides nothing: the
    // uses come every 1.5 s, well within the idle time, and end well before the maximum age.
    const short = await startTestGateway(env, 0, undefined, { sessionIdleMs: 4_000, sessionMaxMs: 10_000 });
    try {
      const fields = { name: null, email: null, role: 'viewer' as const, paths: null, idToken: undefined };
      const used = await short.sessions!.create({ sub: 'used', ...fields });
      const idle = await short.sessions!.create({ sub: 'idle', ...fields });
      const t0 = Date.now();
      // Used each second: each use moves the idle end forward, up to the maximum age.
      for (let t = 1_500; t <= 7_500; t += 1_500) {
        await new Promise((r) => setTimeout(r, t0 + t - Date.now()));
        expect(await me(short.url, used)).toBe(200);
      }
      // Unused for over its idle time: refused, by the other gateways too (the expiry is the row's).
      expect(await me(short.url, idle)).toBe(401);
      expect(await me(a.url, idle)).toBe(401);
      expect(await me(b.url, idle)).toBe(401);
      await new Promise((r) => setTimeout(r, t0 + 10_500 - Date.now()));
      expect(await me(short.url, used)).toBe(401);
      expect(await me(b.url, used)).toBe(401);

      // The rows stay until the sweep, here run as the gateways' own database login.
      // (A gateway's own first sweep, a minute after it started, may have taken some already: the
      // earlier tests of this file took over a minute on a loaded CI machine.)
      const count = async () => (await stack.deps.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM core.gateway_session WHERE sub IN ('used', 'idle')`)).rows[0].n;
      const left = await count();
      expect(left).toBeLessThanOrEqual(2);
      const db = new Db(gatewayDbUrl, 1);
      try {
        const swept = await sweepGatewaySessions({ db, log: createLogger('silent') });
        expect(swept.sessions).toBeGreaterThanOrEqual(left);
      } finally {
        await db.close();
      }
      expect(await count()).toBe(0);
    } finally {
      await short.close();
    }
  }, 60_000);

  it('answers /ready with the session store reachable', async () => {
    for (const base of [a.url, b.url]) expect((await http(base, 'GET', '/ready')).body).toEqual({ ready: true, upstream: 'reachable', identity_provider: 'loaded', sessions: 'reachable' });
  });

  it('is not ready while its session store takes no writes (a standby after a failover), and ready again after', async () => {
    // Its own login's sessions only: the server's are untouched.
    const sessionsAs = async (on: boolean) => {
      await adminQuery(stack.databaseUrl, `ALTER ROLE ${gatewayRole} ${on ? 'SET default_transaction_read_only = on' : 'RESET default_transaction_read_only'}`);
      await adminQuery(stack.databaseUrl, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = '${gatewayRole}'`);
    };
    const readyOf = async (want: string) => {
      for (let i = 0; ; i++) {
        const r = await http(b.url, 'GET', '/ready');
        if (r.body.sessions === want || i >= 100) return r;
        await new Promise((ok) => setTimeout(ok, 100));
      }
    };
    await sessionsAs(true);
    try {
      const r = await readyOf('read only');
      expect(r.status).toBe(503);
      expect(r.body).toEqual({ ready: false, upstream: 'reachable', identity_provider: 'loaded', sessions: 'read only' });
    } finally {
      await sessionsAs(false);
    }
    const back = await readyOf('reachable');
    expect(back.status).toBe(200);
    expect(back.body.ready).toBe(true);
  });
});
