// Every operation of the OpenAPI document the server serves (/docs/json), sent requests whose only
// fault is one thing, with every other part valid (ids of a real execution, catalog entry,
// credential, keychain entry and limit): each path parameter bad, each query parameter of the
// wrong type, repeated or unknown, the body malformed, of the wrong content type, empty, each
// declared field (and field of a nested object or array item: `events[0].step`) of the wrong type
// or past its bounds, each required field missing, an unknown field. Each must be refused with a 4xx whose JSON `detail` names the field at fault, no stack
// trace, and leave every table of the database as it was. Odd values a field may take or refuse
// (NUL, lone surrogates, 100,000 characters, deep nesting) must not break the server either.
// A fifth of the cases go through `svc gateway` too (a provider's token; the worker routes, which
// workers call on the server, it refuses). openapi-fuzz.test.ts sends junk without valid ids;
// this sends one fault at a time.
import http from 'node:http';
import { afterAll, beforeAll, expect, it } from 'vitest';
import * as v from 'valibot';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { asWorker, bearer } from '../../helpers/auth.ts';
import { gatewayEnv, startTestGateway, TEST_GATEWAY_SECRET } from '../../helpers/gateway.ts';
import { startTestProvider } from '../../helpers/oidc-provider.ts';
import { detailText, STACK_TRACE } from '../../helpers/refusal.ts';
import { asSchema, faultsOf, rotated, sampleOf, type Schema } from '../../helpers/schema-samples.ts';
import { changedTables, tableDigester } from '../../helpers/table-digest.ts';

let t: TestApp;

type Answer = { status: number; text: string };
type Request = { method: string; path: string; body?: string; contentType?: string | null; headers?: Record<string, string> };

/** Sends `r` (a body as application/json unless `contentType` says otherwise; null: no type). */
function send(base: string, r: Request): Promise<Answer> {
  const headers: Record<string, string> = { accept: 'application/json', ...r.headers };
  const type = r.contentType === undefined ? (r.body !== undefined ? 'application/json' : null) : r.contentType;
  if (type) headers['content-type'] = type;
  if (r.body !== undefined) headers['content-length'] = String(Buffer.byteLength(r.body));
  return new Promise((ok, fail) => {
    const req = http.request(new URL(r.path, base), { method: r.method, headers, timeout: 15_000 }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => ok({ status: res.statusCode ?? 0, text }));
    });
    req.on('timeout', () => req.destroy(new Error('no answer within 15 s')));
    req.on('error', fail);
    req.end(r.body);
  });
}

const parameter = v.object({ name: v.string(), in: v.string(), required: v.optional(v.boolean()), schema: v.optional(v.unknown()) });
const operationShape = v.object({
  parameters: v.optional(v.array(parameter)),
  security: v.optional(v.array(v.record(v.string(), v.unknown()))),
  requestBody: v.optional(v.object({ content: v.optional(v.record(v.string(), v.object({ schema: v.optional(v.unknown()) }))) })),
});
const documentShape = v.object({ paths: v.record(v.string(), v.record(v.string(), v.unknown())) });

type Param = { name: string; in: string; required: boolean; schema: Schema };
/** `workerOnly`: the route takes only the worker token (SVC_AUTH=none lets any other caller in on loopback). */
type Operation = { method: string; template: string; params: Param[]; body: Schema | undefined; workerOnly: boolean };

/** A request with one fault, and what its refusal must say. */
type Case = {
  what: string;
  request: Request;
  /** Named in the detail of a 400, 403 (a worker's claim headers) or 422. */
  field?: string;
  /** False for values the route may take: then any status but 5xx will do. */
  refused: boolean;
};

const PLAYBOOK = `apiVersion: svc/v1
kind: Playbook
metadata: { name: refusals, path: fuzz/ok }
workflow:
  - step: start
    tool: { name: t, kind: noop }
triggers:
  - { name: tick, kind: schedule, cron: "0 2 * * *" }
`;

/** Valid values of path parameters, body fields and query parameters, by name (and route). */
let ids: { execution: number; catalog: number; command: number };
function validPathValue(template: string, name: string): string {
  if (template.startsWith('/api/commands/')) return String(ids.command);
  if (name === 'execution_id' || name === 'id') return String(ids.execution);
  if (name === 'catalog_id') return String(ids.catalog);
  if (name === 'path') return 'fuzz/ok';
  if (name === 'step') return 'start';
  if (name === 'action') return template.startsWith('/api/triggers/') ? 'pause' : 'deploy';
  if (name === 'handle') return '00000000-0000-4000-8000-000000000000';
  if (name === 'keychain_name') return 'k1';
  if (name === 'name') return template.startsWith('/api/credentials') ? 'fuzz-cred' : template.startsWith('/api/limits') ? 'fuzz-limit' : template.startsWith('/api/triggers/') ? 'tick' : 'go';
  return 'x';
}
const bodyHints = (): Record<string, unknown> => ({ path: 'fuzz/ok', execution_id: ids.execution, content: PLAYBOOK, query: 'SELECT 1', name: 'fuzz-new', worker_id: 'w-fuzz' });
/** Bodies whose required fields alone are not a valid request. */
const BASELINES: Record<string, unknown> = { 'PUT /api/limits/{name}': { concurrency: 1 }, 'POST /api/credentials/{name}/test': { url: 'http://127.0.0.1:9/' } };

function operationsOf(raw: unknown): Operation[] {
  const doc = v.parse(documentShape, raw);
  const out: Operation[] = [];
  for (const [template, methods] of Object.entries(doc.paths)) {
    for (const [method, rawOp] of Object.entries(methods)) {
      if (!['get', 'post', 'put', 'patch', 'delete'].includes(method)) continue;
      const op = v.parse(operationShape, rawOp);
      const params = (op.parameters ?? []).map((p) => ({ name: p.name, in: p.in, required: p.required ?? false, schema: asSchema(p.schema) }));
      const json = op.requestBody?.content?.['application/json'];
      const workerOnly = Boolean(op.security?.length) && (op.security ?? []).every((s) => 'worker' in s);
      out.push({ method: method.toUpperCase(), template, params, body: json ? asSchema(json.schema) : undefined, workerOnly });
    }
  }
  return out;
}

const isObjectValue = (x: unknown): x is Record<string, unknown> => typeof x === 'object' && x !== null && !Array.isArray(x);
const isInteger = (s: Schema) => s.type === 'integer' || Boolean(s.anyOf?.some((x) => x.type === 'integer'));

/** The requests of one operation, each with one fault. */
function casesOf(op: Operation): Case[] {
  const pathParams = op.params.filter((p) => p.in === 'path');
  const queryParams = op.params.filter((p) => p.in === 'query');
  const pathWith = (name?: string, value?: string) => op.template.replace(/\{([^}]+)\}/g, (_m, n: string) => (n === name ? value ?? '' : encodeURIComponent(validPathValue(op.template, n))));
  const requiredQuery = queryParams.filter((p) => p.required).map((p) => `${p.name}=${encodeURIComponent(String(sampleOf(p.schema)))}`);
  const queryWith = (...extra: string[]) => (requiredQuery.length + extra.length ? `?${[...requiredQuery, ...extra].join('&')}` : '');
  const baseline = op.body ? BASELINES[`${op.method} ${op.template}`] ?? sampleOf(op.body, bodyHints()) : undefined;
  const baseBody = baseline === undefined ? undefined : JSON.stringify(baseline);
  const at = (path: string, body: string | null = baseBody ?? null, extra: Partial<Request> = {}): Request => ({ method: op.method, path, body: body ?? undefined, ...extra, headers: { ...(op.workerOnly ? asWorker : {}), ...extra.headers } });
  const cases: Case[] = [];

  for (const p of pathParams) {
    const integer = isInteger(p.schema);
    const values = integer
      ? ['abc', '0', '-1', '1.5', '1e3', '0x10', 'NaN', '99999999999999999999', '%20', '%2B1', '1%20', '%EF%BC%91']
      : ['%00', '..%2F..%2Fetc%2Fpasswd', 'q'.repeat(3000), '%ED%A0%80', '%E0%A4%A', '%C0%AF'];
    for (const value of values) {
      // A string parameter's odd value may name nothing there is (404) or be refused.
      cases.push({ what: `path ${p.name}=${value.slice(0, 20)}`, request: at(pathWith(p.name, value) + queryWith()), field: integer ? p.name : undefined, refused: true });
    }
  }
  const base = pathWith() + queryWith();
  for (const q of queryParams) {
    const others = requiredQuery.filter((x) => !x.startsWith(`${q.name}=`));
    const path = (value: string) => `${pathWith()}?${[...others, `${q.name}=${value}`].join('&')}`;
    const bad: string[] = [];
    if (isInteger(q.schema)) bad.push('abc', '-1', '1.5', 'NaN', '1e3', '99999999999999999999', '0x10');
    if (q.schema.enum) bad.push('__bogus__');
    if (q.schema.maxLength !== undefined) bad.push('y'.repeat(q.schema.maxLength + 1));
    if ([q.schema, ...(q.schema.anyOf ?? [])].some((x) => x.format?.startsWith('date'))) bad.push('yesterday', '2020-13-45T00:00:00Z', '2020-02-30', '%2B275760-09-14T00:00:00Z');
    if (q.schema.format === 'uuid') bad.push('not-a-uuid', '00000000-0000-4000-8000-00000000000g');
    for (const value of bad) cases.push({ what: `query ${q.name}=${value.slice(0, 20)}`, request: at(path(value)), field: q.name, refused: true });
    for (const value of rotated(['%00', '%ED%A0%80', '%E0%A4%A', 'z'.repeat(5000)], 2)) cases.push({ what: `query ${q.name}=${value.slice(0, 20)}`, request: at(path(value)), refused: false });
    // A parameter of one type takes one value (label, of several types, takes several).
    if (q.schema.type || q.schema.enum) {
      const one = encodeURIComponent(String(sampleOf(q.schema)));
      cases.push({ what: `query ${q.name} twice`, request: at(`${path(one)}&${q.name}=${one}`), field: q.name, refused: true });
    }
  }
  // Probes and scrapers outside /api (/health, /metrics) may carry a query of their own.
  cases.push({ what: 'an unknown query parameter', request: at(`${pathWith()}?${[...requiredQuery, 'zz_unknown=1'].join('&')}`), field: 'zz_unknown', refused: op.template.startsWith('/api/') });
  for (const p of queryParams.filter((x) => x.required)) {
    cases.push({ what: `query ${p.name} missing`, request: at(pathWith() + (requiredQuery.length > 1 ? `?${requiredQuery.filter((x) => !x.startsWith(`${p.name}=`)).join('&')}` : '')), field: p.name, refused: true });
  }

  if (op.body && isObjectValue(baseline)) {
    const body = op.body;
    for (const raw of ['{', '{"a":}', "{'a':1}", '{"a":NaN}', '{"a":1}x', '[1,]']) cases.push({ what: `malformed JSON ${raw}`, request: at(base, raw), refused: true });
    cases.push({ what: 'an empty body with a JSON content type', request: at(base, ''), refused: true });
    cases.push({ what: 'the body as text/plain', request: at(base, baseBody, { contentType: 'text/plain' }), refused: true });
    cases.push({ what: 'the body as a form', request: at(base, 'a=1', { contentType: 'application/x-www-form-urlencoded' }), refused: true });
    cases.push({ what: 'the body as multipart', request: at(base, '--b\r\n\r\n--b--', { contentType: 'multipart/form-data; boundary=b' }), refused: true });
    cases.push({ what: 'the body as application/json in latin1', request: at(base, baseBody, { contentType: 'application/json; charset=iso-8859-1' }), refused: false });
    cases.push({ what: 'the body after a byte order mark', request: at(base, `\ufeff${baseBody}`), refused: false });
    cases.push({ what: 'a key twice', request: at(base, `{"zz_twice":1,"zz_twice":2,${baseBody?.slice(1)}`.replace(/,}$/, '}')), refused: body.additionalProperties === false });
    for (const raw of ['[]', 'null', '1', '"x"', 'true']) cases.push({ what: `a body of ${raw}`, request: at(base, raw), refused: true });
    if (body.required?.length) cases.push({ what: 'no body', request: at(base, null), refused: true });
    for (const f of faultsOf(body, baseline, bodyHints())) cases.push({ what: `${f.field} ${f.what}`, request: at(base, f.body), field: f.field, refused: f.refused });
    cases.push({ what: '__proto__', request: at(base, `{"__proto__":{"polluted":1},${baseBody?.slice(1)}`.replace(/,}$/, '}')), refused: false });
  }
  if (!op.body && op.method !== 'GET' && !op.template.startsWith('/api/hooks/') && op.template.startsWith('/api/')) {
    cases.push({ what: 'a body where the route takes none', request: at(base, '{"zz_unknown":1}'), field: 'zz_unknown', refused: true });
  }
  // What a worker names its claimed command by, on the routes that read a secret for it.
  const claim = { 'x-svc-command': String(ids.command), 'x-svc-attempt': '1', 'x-svc-worker': 'w-fuzz' };
  // A credential's data is what they are read for; its metadata reads none of them.
  const claimed = queryParams.some((p) => p.name === 'include_data') ? `${pathWith()}?include_data=true` : base;
  for (const h of op.params.filter((p) => p.in === 'header' && p.name in claim)) {
    for (const value of ['abc', '-1', '0', '1.5', '99999999999999999999', ' ', 'h'.repeat(300)]) {
      cases.push({ what: `header ${h.name}: ${value.slice(0, 20)}`, request: at(claimed, baseBody ?? null, { headers: { ...asWorker, ...claim, [h.name]: value } }), field: h.name, refused: h.name !== 'x-svc-worker' || value.length > 200 });
    }
  }
  if (op.params.some((p) => p.name === 'idempotency-key')) {
    cases.push({ what: 'an idempotency key of 8,000 characters', request: at(base, baseBody, { headers: { 'idempotency-key': 'k'.repeat(8000) } }), refused: false });
  }
  return cases;
}

beforeAll(async () => {
  t = await startTestApp();
  const reg = v.parse(v.object({ catalog_id: v.number() }), JSON.parse((await send(t.url, { method: 'POST', path: '/api/catalog/playbook', body: JSON.stringify({ content: PLAYBOOK }) })).text));
  const run = v.parse(v.object({ execution_id: v.number() }), JSON.parse((await send(t.url, { method: 'POST', path: '/api/run/playbook', body: JSON.stringify({ path: 'fuzz/ok' }) })).text));
  const command = await t.deps.db.query<{ id: string }>('SELECT command_id::text AS id FROM core.command ORDER BY command_id LIMIT 1');
  ids = { execution: run.execution_id, catalog: reg.catalog_id, command: Number(command.rows[0]?.id ?? 1) };
  const seeds: Request[] = [
    { method: 'POST', path: '/api/credentials', body: JSON.stringify({ name: 'fuzz-cred', type: 'bearer', data: { token: 'secret-token' } }) },
    { method: 'POST', path: `/api/keychain/${ids.catalog}/k1`, body: JSON.stringify({ token_data: { t: 'x' }, credential_type: 'bearer' }) },
    { method: 'PUT', path: '/api/limits/fuzz-limit', body: JSON.stringify({ concurrency: 1 }) },
  ];
  for (const s of seeds) {
    const a = await send(t.url, s);
    expect(a.status, `${s.method} ${s.path}: ${a.text}`).toBeLessThan(300);
  }
});
afterAll(async () => {
  await t?.close();
});

/** What is wrong with `a`, the answer to `c`. */
function problemsOf(c: Case, a: Answer): string[] {
  const problems: string[] = [];
  if (a.status >= 500) problems.push(`status ${a.status}`);
  else if (c.refused && (a.status < 400 || a.status > 499)) problems.push(`status ${a.status}, not a refusal`);
  if (STACK_TRACE.test(a.text)) problems.push('a stack trace or source path');
  if (a.status >= 400) {
    let detail: unknown;
    try {
      detail = v.parse(v.object({ detail: v.unknown() }), JSON.parse(a.text)).detail;
    } catch {
      problems.push('not a JSON object with a detail');
    }
    const text = detailText(detail);
    if (!text) problems.push('no detail');
    else if (c.field && c.refused && [400, 403, 422].includes(a.status) && !text.includes(c.field)) problems.push(`detail does not name ${c.field}`);
  }
  return problems;
}

type Walk = { failures: string[]; requests: number; covered: Set<string> };

/**
 * Sends each operation's cases (those `pick` takes, by their index) to `base` with `headers`
 * (a case's own win) and checks each answer and the tables after it.
 */
async function walk(base: string, headers: Record<string, string>, pick: (i: number) => boolean): Promise<Walk> {
  // What ends the seeded execution (a cancel, a cleanup) goes last: the other routes meet it as it is.
  const ends = (op: Operation) => /\/(cancel|cleanup)$/.test(op.template);
  const operations = operationsOf(JSON.parse((await send(t.url, { method: 'GET', path: '/docs/json' })).text)).sort((x, y) => Number(ends(x)) - Number(ends(y)));
  expect(operations.length).toBeGreaterThan(50);
  const out: Walk = { failures: [], requests: 0, covered: new Set() };
  const tableDigest = await tableDigester(t.deps.db);
  let before = await tableDigest();
  // The requests refused since `before`. The tables are read again before a case the route may
  // take, after every 20 refusals and at each operation's end: a change in between is theirs.
  let refused: string[] = [];
  const check = async () => {
    if (refused.length === 0) return;
    const after = await tableDigest();
    const changed = changedTables(before, after);
    if (changed.length) out.failures.push(`refused, but changed ${changed.join(', ')}: one of ${refused.join(' | ')}`);
    before = after;
    refused = [];
  };
  for (const op of operations) {
    for (const [i, c] of casesOf(op).entries()) {
      if (!pick(i)) continue;
      if (!c.refused) await check();
      let a: Answer;
      try {
        a = await send(base, { ...c.request, headers: { ...headers, ...c.request.headers } });
      } catch (err) {
        out.failures.push(`${op.method} ${op.template} ${c.what}: no answer (${String(err)})`);
        continue;
      }
      out.requests++;
      out.covered.add(`${op.method} ${op.template}`);
      const problems = problemsOf(c, a);
      if (problems.length) out.failures.push(`${op.method} ${op.template} ${c.what}: ${problems.join('; ')} -> ${a.status} ${a.text.slice(0, 200)}`);
      if (a.status >= 400) {
        refused.push(`${op.method} ${op.template} ${c.what}`);
        if (refused.length >= 20) await check();
        continue;
      }
      // An accepted request may go on writing (a batch's events are stored after its 202): the
      // next baseline is what the tables hold once they stop changing.
      let after = await tableDigest();
      for (let settled = false; !settled; ) {
        await new Promise((r) => setTimeout(r, 100));
        const again = await tableDigest();
        settled = changedTables(after, again).length === 0;
        after = again;
      }
      before = after;
    }
    await check();
    expect(out.covered.has(`${op.method} ${op.template}`), `${op.method} ${op.template} got no request`).toBe(true);
  }
  return out;
}

it('refuses each operation of the OpenAPI document one fault at a time: a 4xx naming the field, no stack trace, nothing changed', async () => {
  const w = await walk(t.url, {}, () => true);
  expect(w.failures).toEqual([]);
  expect(w.requests).toBeGreaterThan(1500);
}, 120_000);

it('refuses them alike through the gateway (every fifth case of each operation)', async () => {
  const idp = await startTestProvider(['http://127.0.0.1:1']);
  const gw = await startTestGateway(gatewayEnv(t, idp, TEST_GATEWAY_SECRET));
  try {
    const w = await walk(gw.url, bearer(await idp.programToken('program-admin')), (i) => i % 5 === 0);
    expect(w.failures).toEqual([]);
    expect(w.requests).toBeGreaterThan(300);
  } finally {
    await gw.close();
    await idp.close();
  }
}, 120_000);
