// The gateway's added latency: the same API request sent straight to the server and through
// `svc gateway` (a process of its own, as deployed), interleaved one by one so both see the same
// machine; p50/p99 of each and their difference. Three ways in through the gateway: the server's
// API token passed through, a bearer JWT verified against a real OpenID provider's JWKS and
// turned into a signed identity assertion, and a person's session cookie (its row read from
// PostgreSQL on every request: the sessions gateways share).
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { Db } from '../src/db/db.ts';
import { SessionStore } from '../src/gateway/session-store.ts';
import { API_AUDIENCE, GATEWAY_CLIENT_ID, GATEWAY_CLIENT_SECRET, startTestProvider } from '../test/helpers/oidc-provider.ts';
import { request } from './http-client.ts';
import { quantile, round } from './stats.ts';

/** Requests per path (each paired with a direct one). */
export const GATEWAY_SAMPLES = 2_000;
const WARMUP = 200;
/** The goal: what the gateway may add at the median, in ms. */
export const GATEWAY_TARGET_P50_MS = 1;
const PATH = '/api/executions?limit=1';

export type LatencyPair = { via: string; direct: { p50: number; p99: number }; gateway: { p50: number; p99: number }; added: { p50: number; p99: number } };
export type GatewayLatencyResult = { samples: number; path: string; pairs: LatencyPair[] };

const ms = (t0: bigint): number => Number(process.hrtime.bigint() - t0) / 1e6;

/** Starts `svc gateway` as a child process; resolves with its URL once it listens. */
async function spawnGateway(env: Record<string, string>): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, [join(import.meta.dirname, '../src/cli.ts'), 'gateway', '--port', '0'], {
    env: { ...process.env, SVC_LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const url = await new Promise<string>((ok, fail) => {
    let out = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const m = /listening on (http:\/\/\S+),/.exec(out);
      if (m) ok(m[1]);
    });
    child.once('exit', (code) => fail(new Error(`svc gateway exited with ${code}: ${out}`)));
  });
  return { url, child };
}

async function pair(via: string, direct: string, gateway: string, directHeaders: Record<string, string>, gatewayHeaders: Record<string, string>): Promise<LatencyPair> {
  const d: number[] = [];
  const g: number[] = [];
  for (let i = 0; i < WARMUP + GATEWAY_SAMPLES; i++) {
    let t0 = process.hrtime.bigint();
    const a = await request(direct, 'GET', PATH, undefined, directHeaders);
    const dt = ms(t0);
    t0 = process.hrtime.bigint();
    const b = await request(gateway, 'GET', PATH, undefined, gatewayHeaders);
    const gt = ms(t0);
    if (a.status !== 200 || b.status !== 200) throw new Error(`gateway bench (${via}): direct ${a.status}, gateway ${b.status} ${JSON.stringify(b.body).slice(0, 200)}`);
    if (i >= WARMUP) {
      d.push(dt);
      g.push(gt);
    }
  }
  const q = (xs: number[]) => ({ p50: round(quantile(xs, 0.5), 3), p99: round(quantile(xs, 0.99), 3) });
  const direct50 = q(d);
  const gw50 = q(g);
  return { via, direct: direct50, gateway: gw50, added: { p50: round(gw50.p50 - direct50.p50, 3), p99: round(gw50.p99 - direct50.p99, 3) } };
}

/**
 * Measures against the server at `serverUrl` (SVC_AUTH=none, so the direct call needs no
 * credential and the gateway's identity header costs the server nothing extra to ignore).
 */
export async function measureGatewayLatency(serverUrl: string, databaseUrl: string, progress: (msg: string) => void): Promise<GatewayLatencyResult> {
  const idp = await startTestProvider(['http://127.0.0.1:1']);
  const gw = await spawnGateway({
    SVC_SERVER_URL: serverUrl,
    SVC_DATABASE_URL: databaseUrl,
    SVC_GATEWAY_SECRET: randomBytes(32).toString('base64url'),
    SVC_OIDC_ISSUER: idp.issuer,
    SVC_OIDC_CLIENT_ID: GATEWAY_CLIENT_ID,
    SVC_OIDC_CLIENT_SECRET: GATEWAY_CLIENT_SECRET,
    SVC_OIDC_AUDIENCE: API_AUDIENCE,
    // The bench is one identity sending thousands of requests a minute.
    SVC_GATEWAY_RATE_LIMIT_PER_MINUTE: '1000000',
  });
  try {
    for (let i = 0; i < 100; i++) {
      const ready = await request(gw.url, 'GET', '/ready');
      if (ready.status === 200) break;
      await new Promise((ok) => setTimeout(ok, 100));
    }
    const apiToken = `svc_${randomBytes(32).toString('base64url')}`;
    const jwt = await idp.programToken('program-viewer');
    progress(`gateway latency: ${GATEWAY_SAMPLES} requests each way, API token passed through`);
    const viaToken = await pair('API token (passed through)', serverUrl, gw.url, {}, { authorization: `Bearer ${apiToken}` });
    progress(`gateway latency: ${GATEWAY_SAMPLES} requests each way, bearer JWT`);
    const viaJwt = await pair('bearer JWT (verified, asserted upstream)', serverUrl, gw.url, {}, { authorization: `Bearer ${jwt}` });
    // A session as a login makes one, in the database the gateway reads it from.
    const db = new Db(databaseUrl, 1);
    let sid: string;
    try {
      sid = await new SessionStore(db, 3_600_000, 3_600_000).create({ sub: 'bench', name: null, email: null, role: 'viewer', paths: null, idToken: undefined });
    } finally {
      await db.close();
    }
    progress(`gateway latency: ${GATEWAY_SAMPLES} requests each way, session cookie`);
    const viaSession = await pair('session cookie (row read from PostgreSQL)', serverUrl, gw.url, {}, { cookie: `svc_session=${sid}` });
    return { samples: GATEWAY_SAMPLES, path: PATH, pairs: [viaToken, viaJwt, viaSession] };
  } finally {
    gw.child.kill('SIGTERM');
    await idp.close();
  }
}
