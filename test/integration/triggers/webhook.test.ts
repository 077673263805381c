// Webhook triggers on a real server (SVC_AUTH=token: deliveries carry no API token) and a real
// PostgreSQL, with a real gateway in front for the pass-through: a signed delivery starts one
// execution with the mapped payload; tampered, wrongly signed, stale and unsigned deliveries start
// nothing; the same delivery id five times at once starts one; size limits, unknown triggers,
// pauses and refused payloads answer without starting anything; the secret shows nowhere.
import { createHash, createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, createApiToken } from '../../helpers/auth.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { startTestGateway, TEST_GATEWAY_SECRET, type TestGateway } from '../../helpers/gateway.ts';
import { http, type Json } from '../../helpers/http.ts';

const SECRET = 'whsec-test-6f1c2b9e0d7a4e53b8a1c4d2e9f07a36';
const BEARER_SECRET = 'bearer-hook-secret-0b5e7c1d9a2f4863';
const PATH = 'hooks/repo';

let a: TestApp;
let gw: TestGateway;
let admin: Record<string, string>;
// Every answer a delivery got (status line, headers and body), for the secret check at the end.
const answers: string[] = [];

const hmacHex = (secret: string, text: string | Buffer) => createHmac('sha256', secret).update(text).digest('hex');
const nowS = () => Math.floor(Date.now() / 1000);

const PLAYBOOK = `apiVersion: svc/v1
kind: Playbook
metadata: { name: hooks, path: ${PATH} }
workload: { repo: none }
triggers:
  - name: github
    kind: webhook
    auth: gh_hook
    signature: github
    delivery_id: "{{ request.headers['x-github-delivery'] }}"
    payload: { repo: "{{ request.body.repository.full_name }}", event: "{{ request.headers['x-github-event'] }}", note: "{{ request.body.note | default('') }}", via: "{{ trigger.kind }}" }
  - name: by_body
    kind: webhook
    auth: gh_hook
    signature: github
    payload: { repo: "{{ request.body.repository.full_name }}" }
  - name: stripe
    kind: webhook
    auth: gh_hook
    signature: stripe
    payload: { repo: "{{ request.body.id }}" }
  - name: acme
    kind: webhook
    auth: gh_hook
    signature: { style: hmac, header: x-acme-signature, prefix: "v1=", timestamp_header: x-acme-timestamp }
    payload: { repo: "{{ request.query.repo }}" }
  - name: bearer
    kind: webhook
    auth: bearer_hook
    signature: bearer
    payload: { headers: "{{ request.headers }}", query: "{{ request.query }}", body: "{{ request.body }}" }
  - name: small
    kind: webhook
    auth: gh_hook
    signature: github
    max_body_bytes: 64
  - name: pausable
    kind: webhook
    auth: gh_hook
    signature: github
  - name: no_secret
    kind: webhook
    auth: missing_credential
    signature: github
  - name: nightly
    kind: schedule
    cron: "0 2 * * *"
workflow:
  - step: start
    tool: { name: t, kind: noop }
`;

const TYPED = `apiVersion: svc/v1
kind: Playbook
metadata: { name: typed, path: hooks/typed }
inputs: { count: { type: integer, required: true } }
triggers:
  - { name: counted, kind: webhook, auth: gh_hook, signature: github, payload: { count: "{{ request.body.count }}" } }
workflow:
  - step: start
    tool: { name: t, kind: noop }
`;

beforeAll(async () => {
  a = await startTestApp({ SVC_AUTH: 'token' });
  admin = bearer(await createApiToken(a.deps.db, 'hooks-admin', 'admin'));
  for (const [name, secret] of [['gh_hook', SECRET], ['bearer_hook', BEARER_SECRET]]) {
    const made = await http(a.url, 'POST', '/api/credentials', { name, type: 'custom', data: { secret } }, admin);
    expect(made.status, JSON.stringify(made.body)).toBe(201);
  }
  for (const content of [PLAYBOOK, TYPED]) {
    const reg = await http(a.url, 'POST', '/api/catalog/playbook', { content }, admin);
    expect(reg.status, JSON.stringify(reg.body)).toBe(201);
  }
  gw = await startTestGateway({ SVC_SERVER_URL: a.url, SVC_GATEWAY_SECRET: TEST_GATEWAY_SECRET });
});
afterAll(async () => {
  await gw?.close();
  await a?.close();
});

type Delivery = { status: number; body: Json };

/** POSTs `body` as sent (bytes unchanged) to /api/hooks/{path}/{name}, with no API token. */
async function deliver(name: string, body: string | Buffer, headers: Record<string, string>, opts: { path?: string; base?: string; query?: string } = {}): Promise<Delivery> {
  const res = await fetch(`${opts.base ?? a.url}/api/hooks/${opts.path ?? PATH}/${name}${opts.query ?? ''}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
  const text = await res.text();
  answers.push(`${res.status} ${JSON.stringify([...res.headers])} ${text}`);
  return { status: res.status, body: text ? JSON.parse(text) : null };
}

/**
 * POSTs `body` with exactly these header lines, in order (a name may repeat: fetch joins repeats
 * into one line), and records the answer like `deliver`.
 */
function deliverLines(name: string, body: string, lines: [string, string][]): Promise<Delivery> {
  const url = new URL(`${a.url}/api/hooks/${PATH}/${name}`);
  const headers = [['host', url.host], ['content-length', String(Buffer.byteLength(body))], ...lines].flat();
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'POST', headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => {
        answers.push(`${res.statusCode} ${JSON.stringify(res.headers)} ${text}`);
        resolve({ status: res.statusCode ?? 0, body: text ? JSON.parse(text) : null });
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

const github = (body: string, delivery: string, secret = SECRET) => ({
  'x-hub-signature-256': `sha256=${hmacHex(secret, body)}`,
  'x-github-delivery': delivery,
  'x-github-event': 'push',
});

async function executionCount(path = PATH): Promise<number> {
  const { rows } = await a.deps.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM core.execution WHERE path = $1`, [path]);
  return rows[0].n;
}

async function started(executionId: number): Promise<Json> {
  const { rows } = await a.deps.db.query<{ context: Json }>(`SELECT context FROM core.event WHERE execution_id = $1 AND event_type = 'execution.started'`, [executionId]);
  return rows[0].context;
}

async function refusedCount(reason: string): Promise<number> {
  const { values } = await a.deps.metrics.triggerRefused.get();
  return values.find((v) => v.labels.reason === reason)?.value ?? 0;
}

let seq = 0;
const deliveryId = () => `d-${Date.now()}-${++seq}`;
const pushBody = (repo: string, extra: Record<string, unknown> = {}) => JSON.stringify({ ref: 'refs/heads/main', repository: { full_name: repo }, ...extra });

describe('webhook deliveries', () => {
  it('a valid GitHub signature starts one execution with the mapped payload; the trigger and fire key are in execution.started; the body is data, never a template', async () => {
    // Token mode: other routes need an API token; the hook does not.
    expect((await http(a.url, 'GET', '/api/executions')).status).toBe(401);
    const before = await executionCount();
    const body = pushBody('octo/hello', { note: '{{ 7 * 7 }}' });
    const id = deliveryId();
    const res = await deliver('github', body, github(body, id));
    expect(res).toEqual({ status: 202, body: { execution_id: expect.any(Number), duplicate: false } });
    expect(await executionCount()).toBe(before + 1);
    const context = await started(res.body.execution_id);
    expect(context.trigger).toEqual({ name: 'github', kind: 'webhook', fire_key: id });
    const { rows } = await a.deps.db.query<{ workload: Json }>(`SELECT context->'input'->'workload' AS workload FROM core.event WHERE execution_id = $1 AND event_type = 'execution.started'`, [res.body.execution_id]);
    expect(rows[0].workload).toEqual({ repo: 'octo/hello', event: 'push', note: '{{ 7 * 7 }}', via: 'webhook' });
  });

  it('a tampered body, a wrong secret, a missing or malformed signature: 401 with a detail, nothing started, counted', async () => {
    const before = await executionCount();
    const counted = await refusedCount('signature');
    const body = pushBody('octo/tampered');
    const signed = github(body, deliveryId());
    const refusals = [
      await deliver('github', body.replace('tampered', 'tampereD'), signed),
      await deliver('github', body, github(body, deliveryId(), 'not-the-secret')),
      await deliver('github', body, { 'x-github-delivery': deliveryId() }),
      await deliver('github', body, { ...signed, 'x-hub-signature-256': signed['x-hub-signature-256'].replace('sha256=', '') }),
    ];
    for (const r of refusals) {
      expect(r.status).toBe(401);
      expect(r.body.detail).toEqual({ code: 'signature_invalid', message: expect.stringMatching(/x-hub-signature-256/) });
    }
    expect(refusals[0].body.detail.message).toMatch(/does not match the body/);
    expect(refusals[2].body.detail.message).toMatch(/missing/);
    expect(await executionCount()).toBe(before);
    expect(await refusedCount('signature')).toBe(counted + 4);
    // The same delivery, untouched, goes through: what was refused was the change.
    expect((await deliver('github', body, signed)).status).toBe(202);
  });

  it('stripe and hmac styles: signed and fresh starts; signed but older than 5 minutes is 401 and starts nothing', async () => {
    const before = await executionCount();
    const counted = await refusedCount('timestamp');
    const body = JSON.stringify({ id: 'evt_1', type: 'charge.succeeded' });
    const stripe = (t: number) => ({ 'stripe-signature': `t=${t},v1=${hmacHex(SECRET, `${t}.${body}`)}` });
    const fresh = await deliver('stripe', body, stripe(nowS()));
    expect(fresh.status).toBe(202);
    const stale = await deliver('stripe', body, stripe(nowS() - 600));
    expect(stale.status).toBe(401);
    expect(stale.body.detail).toEqual({ code: 'signature_invalid', message: expect.stringMatching(/stripe-signature timestamp is \d+ s from the server's clock/) });

    const acme = (t: number) => ({ 'x-acme-timestamp': String(t), 'x-acme-signature': `v1=${hmacHex(SECRET, `${t}.${body}`)}` });
    const ok = await deliver('acme', body, acme(nowS()), { query: '?repo=acme%2Fwidgets' });
    expect(ok.status).toBe(202);
    expect((await started(ok.body.execution_id)).input.workload.repo).toBe('acme/widgets');
    const old = await deliver('acme', body, acme(nowS() - 301));
    expect(old.status).toBe(401);
    expect(old.body.detail.message).toMatch(/x-acme-timestamp is \d+ s from the server's clock/);

    expect(await executionCount()).toBe(before + 2);
    expect(await refusedCount('timestamp')).toBe(counted + 2);
  });

  it('a signature header sent twice is refused in every style, whichever copy is good: 401 signature_invalid, nothing started, counted', async () => {
    const before = await executionCount();
    const counted = await refusedCount('signature');
    const body = JSON.stringify({ id: 'evt_twice', type: 'charge.succeeded' });
    const json: [string, string] = ['content-type', 'application/json'];
    const t = nowS();
    const stripeGood = `t=${t},v1=${hmacHex(SECRET, `${t}.${body}`)}`;
    const stripeBad = `t=${t},v1=${'0'.repeat(64)}`;
    const ghGood = `sha256=${hmacHex(SECRET, body)}`;
    const acmeSig = `v1=${hmacHex(SECRET, `${t}.${body}`)}`;
    const refusals = [
      await deliverLines('stripe', body, [json, ['stripe-signature', stripeGood], ['stripe-signature', stripeBad]]),
      await deliverLines('stripe', body, [json, ['stripe-signature', stripeBad], ['stripe-signature', stripeGood]]),
      await deliverLines('bearer', body, [json, ['authorization', `Bearer ${BEARER_SECRET}`], ['authorization', 'Bearer not-the-secret']]),
      await deliverLines('bearer', body, [json, ['authorization', `Bearer ${BEARER_SECRET}`], ['authorization', `Bearer ${BEARER_SECRET}`]]),
      await deliverLines('by_body', body, [json, ['x-hub-signature-256', ghGood], ['x-hub-signature-256', ghGood]]),
      await deliverLines('acme', body, [json, ['x-acme-signature', acmeSig], ['x-acme-timestamp', String(t)], ['x-acme-timestamp', String(t)]]),
    ];
    for (const [i, r] of refusals.entries()) {
      expect(r.status, `refusal ${i}: ${JSON.stringify(r.body)}`).toBe(401);
      expect(r.body.detail).toEqual({ code: 'signature_invalid', message: expect.stringMatching(/sent more than once|missing or is not/) });
    }
    expect(await executionCount()).toBe(before);
    expect(await refusedCount('signature')).toBe(counted + refusals.length);
    // One copy of each goes through.
    expect((await deliverLines('stripe', body, [json, ['stripe-signature', stripeGood]])).status).toBe(202);
    expect((await deliverLines('bearer', body, [json, ['authorization', `Bearer ${BEARER_SECRET}`]])).status).toBe(202);
  });

  it('the same delivery id five times at once starts exactly one execution; the others answer duplicate with its id', async () => {
    const before = await executionCount();
    const body = pushBody('octo/concurrent');
    const headers = github(body, deliveryId());
    const all = await Promise.all(Array.from({ length: 5 }, () => deliver('github', body, headers)));
    expect(all.map((r) => r.status)).toEqual([202, 202, 202, 202, 202]);
    expect(new Set(all.map((r) => r.body.execution_id)).size).toBe(1);
    expect(all.filter((r) => r.body.duplicate)).toHaveLength(4);
    expect(await executionCount()).toBe(before + 1);
    // Later, again: still the first execution.
    const again = await deliver('github', body, headers);
    expect(again.body).toEqual({ execution_id: all[0].body.execution_id, duplicate: true });
  });

  it('deliveries arriving together are fired together: ten ids and five repeats of another at once start eleven executions, each its own', async () => {
    const before = await executionCount();
    const distinct = Array.from({ length: 10 }, (_, i) => pushBody(`octo/burst-${i}`));
    const repeated = pushBody('octo/burst-repeated');
    const repeatedHeaders = github(repeated, deliveryId());
    const answers = await Promise.all([
      ...distinct.map((b) => deliver('github', b, github(b, deliveryId()))),
      ...Array.from({ length: 5 }, () => deliver('github', repeated, repeatedHeaders)),
    ]);
    expect(answers.every((r) => r.status === 202)).toBe(true);
    expect(new Set(answers.slice(0, 10).map((r) => r.body.execution_id)).size).toBe(10);
    expect(answers.slice(0, 10).every((r) => !r.body.duplicate)).toBe(true);
    const repeats = answers.slice(10);
    expect(new Set(repeats.map((r) => r.body.execution_id)).size).toBe(1);
    expect(repeats.filter((r) => r.body.duplicate)).toHaveLength(4);
    expect(await executionCount()).toBe(before + 11);
    for (const [i, r] of answers.slice(0, 10).entries()) expect((await started(r.body.execution_id)).input.workload.repo).toBe(`octo/burst-${i}`);
  });

  it('a redelivery arriving among new deliveries answers its first execution; the new ones each start one', async () => {
    // Fires are written without reading first: the redelivery's recorded key fails the shared
    // write, which is redone without it. Nothing may start twice, nor be lost.
    const first = pushBody('octo/redelivered');
    const firstHeaders = github(first, deliveryId());
    const original = await deliver('github', first, firstHeaders);
    expect(original.body.duplicate).toBe(false);
    const before = await executionCount();
    const fresh = Array.from({ length: 8 }, (_, i) => pushBody(`octo/among-${i}`));
    const answers = await Promise.all([
      ...fresh.slice(0, 4).map((b) => deliver('github', b, github(b, deliveryId()))),
      deliver('github', first, firstHeaders),
      ...fresh.slice(4).map((b) => deliver('github', b, github(b, deliveryId()))),
    ]);
    expect(answers.every((r) => r.status === 202)).toBe(true);
    expect(answers[4].body).toEqual({ execution_id: original.body.execution_id, duplicate: true });
    const started8 = [...answers.slice(0, 4), ...answers.slice(5)];
    expect(started8.every((r) => !r.body.duplicate)).toBe(true);
    expect(new Set(started8.map((r) => r.body.execution_id)).size).toBe(8);
    expect(await executionCount()).toBe(before + 8);
    for (const [i, r] of started8.entries()) expect((await started(r.body.execution_id)).input.workload.repo).toBe(`octo/among-${i}`);
  });

  it('without delivery_id the body\'s SHA-256 is the fire key: the same body again is a duplicate, another body starts', async () => {
    const body = pushBody('octo/by-body');
    const first = await deliver('by_body', body, github(body, 'ignored-1'));
    const second = await deliver('by_body', body, github(body, 'ignored-2'));
    expect(first.body.duplicate).toBe(false);
    expect(second.body).toEqual({ execution_id: first.body.execution_id, duplicate: true });
    expect((await started(first.body.execution_id)).trigger.fire_key).toBe(createHash('sha256').update(body).digest('hex'));
    const other = pushBody('octo/by-body-2');
    expect((await deliver('by_body', other, github(other, 'ignored-3'))).body.duplicate).toBe(false);
  });

  it('a body over the trigger\'s max_body_bytes is 413, by its Content-Length or as it streams, and starts nothing', async () => {
    const before = await executionCount();
    const counted = await refusedCount('too_large');
    const big = JSON.stringify({ pad: 'x'.repeat(100) });
    const declared = await deliver('small', big, github(big, deliveryId()));
    expect(declared.status).toBe(413);
    expect(declared.body.detail).toEqual({ code: 'payload_too_large', message: expect.stringContaining('max_body_bytes (64 bytes)') });
    // Chunked (no Content-Length): counted as the bytes arrive.
    const chunks = [Buffer.from(big.slice(0, 50)), Buffer.from(big.slice(50))];
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        const next = chunks.shift();
        if (next) controller.enqueue(next);
        else controller.close();
      },
    });
    const res = await fetch(`${a.url}/api/hooks/${PATH}/small`, { method: 'POST', headers: { 'content-type': 'application/json', ...github(big, deliveryId()) }, body: stream, duplex: 'half' } as RequestInit);
    const text = await res.text();
    answers.push(text);
    expect(res.status).toBe(413);
    expect(JSON.parse(text).detail.code).toBe('payload_too_large');
    // Within the limit it is taken.
    const fits = '{"a":1}';
    expect((await deliver('small', fits, github(fits, deliveryId()))).status).toBe(202);
    expect(await executionCount()).toBe(before + 1);
    expect(await refusedCount('too_large')).toBe(counted + 2);
  });

  it('an unknown playbook or trigger, a schedule, or no trigger name is 404 and counted', async () => {
    const counted = await refusedCount('unknown_trigger');
    const body = pushBody('octo/none');
    for (const [path, name] of [[PATH, 'nope'], ['hooks/none', 'github'], [PATH, 'nightly']]) {
      const r = await deliver(name, body, github(body, deliveryId()), { path });
      expect(r.status, `${path}/${name}`).toBe(404);
      expect(r.body.detail).toEqual({ code: 'not_found', message: `no webhook trigger '${name}' on playbook '${path}'` });
    }
    const bare = await fetch(`${a.url}/api/hooks/justaname`, { method: 'POST', body: '{}', headers: { 'content-type': 'application/json' } });
    expect(bare.status).toBe(404);
    expect(((await bare.json()) as Json).detail.code).toBe('not_found');
    expect(await refusedCount('unknown_trigger')).toBe(counted + 4);
  });

  it('bearer style: Authorization: Bearer <secret> starts; another secret is 401; the Authorization header never reaches the payload', async () => {
    const body = JSON.stringify({ hello: 'world' });
    const ok = await deliver('bearer', body, { authorization: `Bearer ${BEARER_SECRET}`, 'x-sender': 'ci' }, { query: '?a=1&a=2' });
    expect(ok.status).toBe(202);
    const workload = (await started(ok.body.execution_id)).input.workload;
    expect(workload.body).toEqual({ hello: 'world' });
    expect(workload.query).toEqual({ a: ['1', '2'] });
    expect(workload.headers['x-sender']).toBe('ci');
    expect(workload.headers).not.toHaveProperty('authorization');
    const wrong = await deliver('bearer', body, { authorization: `Bearer ${BEARER_SECRET.slice(0, -1)}` });
    expect(wrong.status).toBe(401);
    expect(wrong.body.detail.message).toBe('the bearer secret does not match');
    expect((await deliver('bearer', body, {})).status).toBe(401);
  });

  it('any Content-Type, however malformed or empty, is read as raw bytes and the signature checked over them: signed starts, unsigned is 401 counted', async () => {
    const before = await executionCount();
    const counted = await refusedCount('signature');
    for (const type of ['text', ';;;', '', 'application/octet-stream', 'text/plain; charset=latin1']) {
      const text = `plain words, {"not": json} as ${JSON.stringify(type)}`;
      const ok = await deliver('bearer', text, { 'content-type': type, authorization: `Bearer ${BEARER_SECRET}`, 'x-type': JSON.stringify(type) });
      expect(ok.status, `${JSON.stringify(type)}: ${JSON.stringify(ok.body)}`).toBe(202);
      const workload = (await started(ok.body.execution_id)).input.workload;
      expect(workload.body).toBe(text);
      expect(workload.headers['x-type']).toBe(JSON.stringify(type));
      if (type !== '') expect(workload.headers['content-type']).toBe(type);
      const unsigned = await deliver('bearer', text, { 'content-type': type });
      expect(unsigned.status).toBe(401);
      expect(unsigned.body.detail.code).toBe('signature_invalid');
      // An HMAC style checks those same bytes: a changed byte is refused.
      const signed = github(text, deliveryId());
      expect((await deliver('by_body', `${text} `, { ...signed, 'content-type': type })).status).toBe(401);
    }
    expect(await executionCount()).toBe(before + 5);
    expect(await refusedCount('signature')).toBe(counted + 10);
    // Declared JSON (a malformed type that still says so) is parsed as JSON.
    const body = pushBody('octo/typed');
    const parsed = await deliver('github', body, { ...github(body, deliveryId()), 'content-type': 'application/json;;;' });
    expect(parsed.status, JSON.stringify(parsed.body)).toBe(202);
    expect((await started(parsed.body.execution_id)).input.workload.repo).toBe('octo/typed');
  });

  it('every refusal carries detail.code from the registry and is counted: bad JSON, a poisoned key, deep nesting, NUL, an empty delivery id, a bad path or query', async () => {
    const before = await executionCount();
    const counts = { body: await refusedCount('body'), delivery_id: await refusedCount('delivery_id'), request: await refusedCount('request') };
    const signed = async (body: string, extra: Record<string, string> = {}, opts: { path?: string; query?: string } = {}) =>
      deliver('github', body, { ...github(body, deliveryId()), ...extra }, opts);
    const cases: [Delivery, number, Json][] = [
      [await signed('{"a": '), 400, { code: 'bad_request', message: expect.stringMatching(/^the body is not valid JSON/) }],
      [await signed('{"__proto__": {"x": 1}}'), 400, { code: 'bad_request', message: 'invalid body', errors: [expect.stringMatching(/^__proto__: is a key that would change an object prototype/)] }],
      [await signed('['.repeat(65) + ']'.repeat(65)), 422, { code: 'unprocessable', message: 'invalid body', errors: [expect.stringContaining('is nested deeper than 64 levels')] }],
      [await signed('{"a": "\\u0000"}'), 422, { code: 'unprocessable', message: 'invalid body', errors: ['a: contains NUL (\\u0000), which cannot be stored'] }],
      [await signed(pushBody('octo/no-id'), { 'x-github-delivery': '   ' }), 400, { code: 'bad_request', message: expect.stringContaining('delivery_id rendered empty') }],
      [await signed(pushBody('octo/q'), {}, { query: '?x=%00' }), 422, { code: 'unprocessable', message: 'invalid querystring', errors: [expect.stringMatching(/^x: contains NUL/)] }],
      [await signed(pushBody('octo/q'), {}, { query: '?x=%E0%A4%A' }), 400, { code: 'bad_request', message: 'invalid querystring', errors: ['x: is not percent-encoded UTF-8'] }],
      // A NUL in the playbook path or the trigger name answered 500 (it reached the lookup's SQL).
      [await signed(pushBody('octo/p'), {}, { path: 'hooks/re%00po' }), 422, { code: 'unprocessable', message: 'invalid path', errors: [expect.stringMatching(/^path: contains NUL/)] }],
    ];
    for (const [i, [r, status, detail]] of cases.entries()) {
      expect(r.status, `case ${i}: ${JSON.stringify(r.body)}`).toBe(status);
      expect(r.body.detail, `case ${i}`).toEqual(detail);
    }
    expect(await executionCount()).toBe(before);
    expect(await refusedCount('body')).toBe(counts.body + 4);
    expect(await refusedCount('delivery_id')).toBe(counts.delivery_id + 1);
    expect(await refusedCount('request')).toBe(counts.request + 3);
  });

  it('headers over 16 KiB are answered 431 by the HTTP parser before any route, and start nothing', async () => {
    const before = await executionCount();
    const body = pushBody('octo/headers');
    const r = await fetch(`${a.url}/api/hooks/${PATH}/github`, { method: 'POST', headers: { ...github(body, deliveryId()), 'content-type': 'application/json', 'x-pad': 'x'.repeat(17 * 1024) }, body });
    answers.push(await r.text());
    expect(r.status).toBe(431);
    expect(await executionCount()).toBe(before);
  });

  it('a paused trigger answers 409 to a signed delivery (401 to an unsigned one) and starts nothing; resumed, it accepts', async () => {
    const before = await executionCount();
    const paused = await http(a.url, 'POST', `/api/triggers/${PATH}/pausable/pause`, {}, admin);
    expect(paused.status, JSON.stringify(paused.body)).toBe(200);
    const body = pushBody('octo/paused');
    const r = await deliver('pausable', body, github(body, deliveryId()));
    expect(r.status).toBe(409);
    expect(r.body.detail).toEqual({ code: 'trigger_paused', message: `trigger 'pausable' of '${PATH}' is paused; resume it to accept deliveries` });
    expect((await deliver('pausable', body, {})).status).toBe(401);
    expect(await executionCount()).toBe(before);
    expect((await http(a.url, 'POST', `/api/triggers/${PATH}/pausable/resume`, {}, admin)).status).toBe(200);
    expect((await deliver('pausable', body, github(body, deliveryId()))).status).toBe(202);
  });

  it('a payload that does not render, or that the playbook\'s inputs refuse, is 422 fire_refused and starts nothing; a credential without a secret is 401', async () => {
    const before = await executionCount();
    const noRepo = JSON.stringify({ zen: 'no repository here' });
    const r = await deliver('github', noRepo, github(noRepo, deliveryId()));
    expect(r.status).toBe(422);
    expect(r.body.detail).toMatchObject({ code: 'fire_refused', message: expect.stringContaining('repository') });
    expect(await executionCount()).toBe(before);

    const typedBefore = await executionCount('hooks/typed');
    const bad = JSON.stringify({ count: 'many' });
    const refused = await deliver('counted', bad, github(bad, deliveryId()), { path: 'hooks/typed' });
    expect(refused.status).toBe(422);
    expect(refused.body.detail.code).toBe('fire_refused');
    const good = JSON.stringify({ count: 3 });
    expect((await deliver('counted', good, github(good, deliveryId()), { path: 'hooks/typed' })).status).toBe(202);
    expect(await executionCount('hooks/typed')).toBe(typedBefore + 1);

    const missing = await deliver('no_secret', noRepo, github(noRepo, deliveryId()));
    expect(missing.status).toBe(401);
    expect(missing.body.detail.message).toMatch(/secret is not set up/);
    expect(a.logs.join('')).toContain("credential 'missing_credential' does not exist");
  });

  it('through the gateway: a delivery passes without any identity, its bytes and Authorization unchanged', async () => {
    const body = pushBody('octo/gateway');
    const viaGateway = await deliver('github', body, github(body, deliveryId()), { base: gw.url });
    expect(viaGateway.status).toBe(202);
    expect((await deliver('bearer', body, { authorization: `Bearer ${BEARER_SECRET}` }, { base: gw.url })).status).toBe(202);
    expect((await deliver('github', body.replace('gateway', 'gatewaY'), github(body, deliveryId()), { base: gw.url })).status).toBe(401);
    // Other API routes still need a caller at the gateway.
    expect((await http(gw.url, 'GET', '/api/executions')).status).toBe(401);
  });

  it('examples/github_webhook.yaml as shipped: a push and GitHub\'s ping start runs with the mapped workload', async () => {
    const content = readFileSync(join(import.meta.dirname, '../../../examples/github_webhook.yaml'), 'utf8');
    expect((await http(a.url, 'POST', '/api/credentials', { name: 'github_hook_auth', type: 'custom', data: { secret: SECRET } }, admin)).status).toBe(201);
    expect((await http(a.url, 'POST', '/api/catalog/playbook', { content }, admin)).status).toBe(201);
    const push = pushBody('octo/shipped', { after: 'c0ffee', pusher: { name: 'octocat' } });
    const pushed = await deliver('push', push, github(push, deliveryId()), { path: 'examples/github_webhook' });
    expect(pushed.status, JSON.stringify(pushed.body)).toBe(202);
    expect((await started(pushed.body.execution_id)).input.workload).toEqual({ event: 'push', repo: 'octo/shipped', ref: 'refs/heads/main', after: 'c0ffee', pusher: 'octocat' });
    const ping = JSON.stringify({ zen: 'Keep it logically awesome.', hook_id: 1, repository: { full_name: 'octo/shipped' } });
    const pinged = await deliver('push', ping, { ...github(ping, deliveryId()), 'x-github-event': 'ping' }, { path: 'examples/github_webhook' });
    expect(pinged.status, JSON.stringify(pinged.body)).toBe(202);
    expect((await started(pinged.body.execution_id)).input.workload).toMatchObject({ event: 'ping', ref: '' });
  });

  it('the signature headers never reach request.headers: a payload copying every header keeps none in its workload or event', async () => {
    const echo = (name: string, signature: string) => `  - { name: ${name}, kind: webhook, auth: gh_hook, signature: ${signature}, payload: { repo: "{{ request.headers }}" } }`;
    const content = `apiVersion: svc/v1
kind: Playbook
metadata: { name: echo, path: hooks/echo }
workload: { repo: none }
triggers:
${echo('github', 'github')}
${echo('stripe', 'stripe')}
${echo('acme', '{ style: hmac, header: X-Acme-Signature, timestamp_header: x-acme-timestamp }')}
workflow:
  - step: start
    tool: { name: t, kind: noop }
`;
    expect((await http(a.url, 'POST', '/api/catalog/playbook', { content }, admin)).status).toBe(201);
    const body = pushBody('octo/echo', { n: deliveryId() });
    const t = String(nowS());
    const signed = `sha256=${hmacHex(SECRET, body)}`;
    const legacy = `sha1=${createHmac('sha1', SECRET).update(body).digest('hex')}`;
    const stripe = `t=${t},v1=${hmacHex(SECRET, `${t}.${body}`)}`;
    const acme = hmacHex(SECRET, `${t}.${body}`);
    const sent = [
      await deliver('github', body, { ...github(body, deliveryId()), 'x-hub-signature': legacy }, { path: 'hooks/echo' }),
      await deliver('stripe', body, { 'stripe-signature': stripe }, { path: 'hooks/echo' }),
      await deliver('acme', body, { 'x-acme-signature': acme, 'x-acme-timestamp': t }, { path: 'hooks/echo' }),
    ];
    for (const res of sent) {
      expect(res.status, JSON.stringify(res.body)).toBe(202);
      const headers = (await started(res.body.execution_id)).input.workload.repo;
      expect(headers).toMatchObject({ 'content-type': 'application/json' });
      expect(Object.keys(headers)).not.toEqual(expect.arrayContaining(['x-hub-signature-256']));
      const text = JSON.stringify(await started(res.body.execution_id));
      for (const signature of [signed, legacy, stripe, acme, hmacHex(SECRET, body)]) expect(text.includes(signature.replace(/^sha\d+=/, '')), 'the event holds a signature').toBe(false);
    }
    expect((await started(sent[2].body.execution_id)).input.workload.repo['x-acme-timestamp']).toBe(t);
  });

  it('the secrets appear in no answer, log line, event or stored execution', async () => {
    expect(answers.length).toBeGreaterThan(30);
    const { rows } = await a.deps.db.query<{ text: string }>(
      `SELECT coalesce(string_agg(context::text, ' '), '') || coalesce((SELECT string_agg(to_jsonb(x)::text, ' ') FROM core.execution x), '') AS text FROM core.event`,
    );
    const metrics = await a.deps.metrics.registry.metrics();
    for (const secret of [SECRET, BEARER_SECRET]) {
      for (const [where, text] of [['answers', answers.join('\n')], ['server log', a.logs.join('')], ['gateway log', gw.logs.join('')], ['events and executions', rows[0].text], ['metrics', metrics]] as const) {
        expect(text.includes(secret), `${where} holds a secret`).toBe(false);
      }
    }
  });
});
