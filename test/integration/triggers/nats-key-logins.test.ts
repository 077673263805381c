// `nats` credentials that log in by key (DESIGN.md "Triggers": servers, and user/password or token
// or creds): `creds` (a .creds file's user JWT and NKEY seed) against a nats-server in operator
// mode, `nkey` (a user seed) against one with NKEY users. Checked on create and update (one login
// kind, the text's shape, the error never quoting it); the credential test connects; a NATS
// trigger consumes with each; a wrong seed is a subscription_problem without it. No seed or JWT
// in any answer or log line.
import { randomBytes } from 'node:crypto';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect, jwtAuthenticator, nkeyAuthenticator, nkeys, type NatsConnection } from '@nats-io/transport-node';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startNatsSubscriptions } from '../../../src/triggers/nats-subscriptions.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { executionApi, type ExecutionApi } from '../../helpers/execution-api.ts';
import { http, type Json } from '../../helpers/http.ts';
import { credsFile, natsUser, startNkeyNatsServer, startOperatorNatsServer, type KeyedNatsServer } from '../../helpers/nats-operator.ts';
import { until } from '../../helpers/until.ts';

const NO_PERIODIC_RELOAD = { reloadIntervalMs: 3_600_000 };
const run = randomBytes(4).toString('hex');
const stream = `SVC_K_${run}`;
const te = (s: string) => new TextEncoder().encode(s);

let t: TestApp;
let api: ExecutionApi;
let operatorServer: KeyedNatsServer;
let nkeyServer: KeyedNatsServer;
// The users of the nkey server: `nkeyUser` logs in; `stranger` is a valid user seed it does not know.
const nkeyUser = natsUser();
const stranger = natsUser();
let creds: string;
let subs: ReturnType<typeof startNatsSubscriptions> | undefined;
const admin: NatsConnection[] = [];
// Every secret of the file: each must stay out of every answer and log line.
const secrets: string[] = [];

/** The user JWT and seed of a .creds text. */
const partsOf = (text: string) => {
  const [jwt, seed] = [...text.matchAll(/-----\n(.+)\n-+END/g)].map((m) => m[1]);
  return { jwt, seed };
};

beforeAll(async () => {
  [t, operatorServer, nkeyServer] = await Promise.all([startTestApp(), startOperatorNatsServer(), startNkeyNatsServer([nkeyUser.pub])]);
  api = executionApi(t.url);
  creds = operatorServer.creds();
  secrets.push(partsOf(creds).seed, partsOf(creds).jwt, nkeyUser.seed, stranger.seed);
  // The streams, made by an admin login of each server.
  const { jwt, seed } = partsOf(operatorServer.creds());
  admin.push(await connect({ servers: operatorServer.url, authenticator: jwtAuthenticator(jwt, te(seed)) }));
  admin.push(await connect({ servers: nkeyServer.url, authenticator: nkeyAuthenticator(te(nkeyUser.seed)) }));
  for (const nc of admin) await (await jetstreamManager(nc)).streams.add({ name: stream, subjects: [`svc_k_${run}.>`] });
});
afterEach(async () => {
  await subs?.stop();
  subs = undefined;
});
afterAll(async () => {
  await Promise.all(admin.map((nc) => nc.close()));
  await t?.close();
  await Promise.all([operatorServer?.close(), nkeyServer?.close()]);
});

const post = (name: string, data: Record<string, unknown>) => http(t.url, 'POST', '/api/credentials', { name, type: 'nats', data });
const probe = (name: string) => http(t.url, 'POST', `/api/credentials/${name}/test`);
const noSecretIn = (what: unknown) => {
  const text = typeof what === 'string' ? what : JSON.stringify(what);
  for (const secret of secrets) expect(text).not.toContain(secret);
};
const refused = async (data: Record<string, unknown>, field: RegExp) => {
  const res = await post(`bad_${randomBytes(3).toString('hex')}`, data);
  expect(res.status, JSON.stringify(res.body)).toBe(400);
  const errors: string[] = res.body.detail.errors;
  expect(errors.join('\n')).toMatch(field);
  noSecretIn(res.body);
};

describe('nats credentials with creds or nkey', () => {
  it('are checked on create and update: one login kind, the shape of the text, never quoted', async () => {
    const { jwt, seed } = partsOf(creds);
    expect((await post('k_creds', { url: operatorServer.url, creds })).status).toBe(201);
    expect((await post('k_nkey', { servers: [nkeyServer.url], nkey: nkeyUser.seed })).status).toBe(201);
    // Two login kinds.
    await refused({ url: operatorServer.url, creds, password: 'pw-12345' }, /'creds'.*'password'|'password'.*'creds'/);
    await refused({ url: nkeyServer.url, nkey: nkeyUser.seed, token: 'tok-12345' }, /'nkey'.*'token'|'token'.*'nkey'/);
    await refused({ url: nkeyServer.url, nkey: nkeyUser.seed, creds }, /'creds'.*'nkey'|'nkey'.*'creds'/);
    await refused({ url: `nats://app:pw@127.0.0.1:${nkeyServer.port}`, nkey: nkeyUser.seed }, /'url'.*'nkey'|'nkey'.*'url'/);
    // The shape of the text.
    await refused({ url: operatorServer.url, creds: jwt }, /'creds'/);
    await refused({ url: operatorServer.url, creds: credsFile(jwt, '') }, /'creds'/);
    await refused({ url: operatorServer.url, creds: credsFile('not-a-jwt', seed) }, /'creds'/);
    await refused({ url: operatorServer.url, creds: credsFile(jwt, nkeyUser.pub) }, /'creds'/);
    await refused({ url: nkeyServer.url, nkey: nkeyUser.pub }, /'nkey'/);
    await refused({ url: nkeyServer.url, nkey: `${nkeyUser.seed.slice(0, -2)}AA` }, /'nkey'/);
    // An account seed is a seed, but not a user's.
    await refused({ url: nkeyServer.url, nkey: new TextDecoder().decode(nkeys.createAccount().getSeed()) }, /'nkey'/);
    // An update that adds a second login is refused too.
    const patched = await http(t.url, 'PATCH', '/api/credentials/k_creds', { data: { token: 'tok-12345' } });
    expect(patched.status, JSON.stringify(patched.body)).toBe(400);
    expect(JSON.stringify(patched.body.detail)).toMatch(/'creds'.*'token'|'token'.*'creds'/);
    noSecretIn(patched.body);
    // The fields are secret (masked in forms).
    const types = await http(t.url, 'GET', '/api/credential-types');
    const fields: { name: string; secret: boolean }[] = types.body.types.find((s: { type: string }) => s.type === 'nats').fields;
    expect(fields.filter((f) => f.name === 'creds' || f.name === 'nkey').map((f) => [f.name, f.secret])).toEqual([
      ['creds', true],
      ['nkey', true],
    ]);
  });

  it('the credential test connects with creds and with nkey; a wrong seed is refused without showing it', async () => {
    for (const name of ['k_creds', 'k_nkey']) {
      const res = await probe(name);
      expect(res.body, name).toMatchObject({ ok: true, type: 'nats' });
    }
    // A user the server does not know, and a .creds whose seed is not the JWT's user.
    expect((await post('k_nkey_wrong', { url: nkeyServer.url, nkey: stranger.seed })).status).toBe(201);
    expect((await post('k_creds_wrong', { url: operatorServer.url, creds: credsFile(partsOf(creds).jwt, stranger.seed) })).status).toBe(201);
    for (const name of ['k_nkey_wrong', 'k_creds_wrong']) {
      const res = await probe(name);
      expect(res.body, name).toMatchObject({ ok: false, type: 'nats' });
      expect(res.body.message, name).toMatch(/Authorization Violation/i);
      noSecretIn(res.body);
    }
  });

  const playbook = (path: string, auth: string, subject: string) => `
apiVersion: svc/v1
kind: Playbook
metadata: { name: ${path.replace(/\W/g, '_')}, path: ${path} }
workload: { order: null }
triggers:
  - name: orders
    kind: nats
    auth: ${auth}
    stream: ${stream}
    subject: ${subject}
    payload:
      order: "{{ message.json }}"
workflow:
  - step: start
    tool: { name: t, kind: noop }
`;
  const executionsOf = async (path: string) => (await t.deps.db.query<{ execution_id: string }>(`SELECT execution_id FROM core.execution WHERE path = $1`, [path])).rows;
  const problemOf = async (path: string): Promise<Json> => ((await http(t.url, 'GET', '/api/triggers')).body.triggers as Json[]).find((x) => x.path === path)?.subscription_problem;

  it('a NATS trigger consumes with a creds credential and with an nkey credential', async () => {
    const cases = [
      { auth: 'k_creds', nc: admin[0], path: `natskey/creds_${run}` },
      { auth: 'k_nkey', nc: admin[1], path: `natskey/nkey_${run}` },
    ];
    for (const c of cases) await api.register(playbook(c.path, c.auth, `svc_k_${run}.${c.auth}`));
    subs = startNatsSubscriptions(t.deps, NO_PERIODIC_RELOAD);
    for (const c of cases) {
      const js = jetstream(c.nc);
      await js.publish(`svc_k_${run}.${c.auth}`, JSON.stringify({ id: c.auth }));
      const [row] = await until(`an execution of ${c.path}`, async () => ((await executionsOf(c.path)).length === 1 ? executionsOf(c.path) : undefined));
      const started = (await api.events(Number(row.execution_id))).find((e) => e.event_type === 'execution.started')!;
      expect(started.context.input.workload).toEqual({ order: { id: c.auth } });
      expect(await problemOf(c.path)).toBeNull();
    }
  });

  it('a wrong seed is a subscription_problem that quotes no secret', async () => {
    const cases = [
      { auth: 'k_creds_wrong', path: `natskey/creds_wrong_${run}` },
      { auth: 'k_nkey_wrong', path: `natskey/nkey_wrong_${run}` },
    ];
    for (const c of cases) await api.register(playbook(c.path, c.auth, `svc_k_${run}.${c.auth}`));
    subs = startNatsSubscriptions(t.deps, NO_PERIODIC_RELOAD);
    for (const c of cases) {
      const problem = await until(`the problem of ${c.path}`, async () => (await problemOf(c.path)) ?? undefined, 20_000, 200);
      expect(problem.message, c.path).toMatch(/Authorization Violation/i);
      noSecretIn(problem);
      expect(await executionsOf(c.path)).toEqual([]);
    }
  });

  it('no seed or JWT reached the log', () => {
    expect(t.logs.length).toBeGreaterThan(0);
    noSecretIn(t.logs.join('\n'));
  });
});
