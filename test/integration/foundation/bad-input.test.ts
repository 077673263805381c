// The bad-input corpus of issue 10: ~80 requests a careless or hostile client sends, against the
// real server over HTTP (listening on port 0, its own PostgreSQL database). Each must get a 4xx
// with a `detail` that names the field at fault, never a 500 or a stack trace, and a refused
// request must store nothing.
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { asWorker } from '../../helpers/auth.ts';
import type { Json } from '../../helpers/http.ts';
import { detailText, STACK_TRACE } from '../../helpers/refusal.ts';

let t: TestApp;

type Answer = { status: number; text: string; body: Json; headers: http.IncomingHttpHeaders };
type Call = {
  method: string;
  path: string;
  /** Serialised with JSON.stringify: NUL and lone surrogates come out as `\u0000` / `\ud800` escapes. */
  json?: unknown;
  /** Sent as is (takes precedence over `json`). */
  raw?: string | Buffer;
  /** Defaults to application/json when there is a body; null sends none. */
  contentType?: string | null;
  /** Transfer-Encoding: chunked instead of a Content-Length. */
  chunked?: boolean;
  /** Send it all before reading the answer (see sendAllThenRead). */
  allThenRead?: boolean;
};

/**
 * The headers of every request of this file. The worker token lets a request through to every
 * route in SVC_AUTH=none (worker routes take only it; the others let any caller in on loopback).
 */
function requestHeaders(c: Call, payload: Buffer | undefined): Record<string, string> {
  const headers: Record<string, string> = { accept: 'application/json', ...asWorker };
  const type = c.contentType === undefined ? (payload ? 'application/json' : null) : c.contentType;
  if (type) headers['content-type'] = type;
  if (payload) {
    if (c.chunked) headers['transfer-encoding'] = 'chunked';
    else headers['content-length'] = String(payload.length);
  }
  return headers;
}

const bodyOf = (c: Call): Buffer | undefined =>
  c.raw !== undefined ? Buffer.from(c.raw) : c.json !== undefined ? Buffer.from(JSON.stringify(c.json)) : undefined;

function parseAnswer(status: number, text: string, headers: http.IncomingHttpHeaders): Answer {
  let body: Json = text;
  try {
    body = text ? JSON.parse(text) : null;
  } catch {
    // not JSON: the assertions say so
  }
  return { status, text, body, headers };
}

/** Sends a request with node:http (which reads the answer while it still writes the body). */
function send(c: Call): Promise<Answer> {
  const payload = bodyOf(c);
  const url = new URL(t.url);
  return new Promise((resolve, reject) => {
    const req = http.request({ host: url.hostname, port: url.port, method: c.method, path: c.path, headers: requestHeaders(c, payload), agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (b: Buffer) => chunks.push(b));
      res.on('end', () => resolve(parseAnswer(res.statusCode ?? 0, Buffer.concat(chunks).toString('utf8'), res.headers)));
      res.on('error', reject);
    });
    req.on('error', reject);
    if (payload && c.chunked) {
      // Several writes, so the body really goes in chunks.
      const step = 256 * 1024;
      for (let i = 0; i < payload.length; i += step) req.write(payload.subarray(i, i + step));
      req.end();
    } else req.end(payload);
  });
}

/**
 * Sends the whole request before reading a byte of the answer, as many clients do (curl
 * uploading a file, Python's requests): an answer sent while they still write, on a socket
 * closed behind it, reaches them as EPIPE or ECONNRESET instead.
 */
function sendAllThenRead(c: Call): Promise<Answer> {
  const payload = bodyOf(c) ?? Buffer.alloc(0);
  const url = new URL(t.url);
  const head = [`${c.method} ${c.path} HTTP/1.1`, `host: ${url.host}`, 'connection: close', ...Object.entries(requestHeaders(c, payload)).map(([k, v]) => `${k}: ${v}`)];
  const body = c.chunked ? Buffer.concat([Buffer.from(`${payload.length.toString(16)}\r\n`), payload, Buffer.from('\r\n0\r\n\r\n')]) : payload;
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(url.port), url.hostname);
    socket.on('error', reject);
    socket.pause();
    socket.write(`${head.join('\r\n')}\r\n\r\n`);
    socket.write(body, (err) => {
      if (err) return reject(err);
      const chunks: Buffer[] = [];
      socket.on('data', (b: Buffer) => chunks.push(b));
      socket.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        const split = raw.indexOf('\r\n\r\n');
        const status = Number(raw.slice(0, split).split(' ')[1]);
        resolve(parseAnswer(status, raw.slice(split + 4), {}));
      });
      socket.resume();
    });
  });
}

const TABLES = ['execution', 'event', 'command', 'catalog', 'credential', 'keychain', 'runtime', 'resource'] as const;

async function rowCounts(): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const table of TABLES) out[table] = (await t.deps.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM core.${table}`)).rows[0].n;
  return out;
}

const nested = (depth: number, leaf: unknown = 1): unknown => {
  let v: unknown = leaf;
  for (let i = 0; i < depth; i++) v = { a: v };
  return v;
};
const deepArrayText = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);
const deepObjectText = (depth: number) => '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);

const PLAYBOOK = `apiVersion: svc/v1
kind: Playbook
metadata: { name: bad-input, path: corpus/ok }
workflow:
  - step: start
    tool: { name: t, kind: noop }
`;
const playbookWith = (stepName: string, workload = 'x: 1') => `apiVersion: svc/v1
kind: Playbook
metadata: { name: bad-input, path: corpus/bad }
workload: { ${workload} }
workflow:
  - step: "${stepName}"
    tool: { name: t, kind: noop }
`;

// Varied enough that PostgreSQL cannot compress it below its btree entry limit.
const INCOMPRESSIBLE_PATH = randomBytes(3_750).toString('base64url'); // 5,000 characters
const NUL = 'a\u0000b';
const LONE_HIGH = 'a\ud800b';
const LONE_LOW = 'a\udc00b';
const BIG = '99999999999999999999999'; // past bigint (2^63-1) too
const PAST_2_53 = '9007199254740993';
const PAST_INT4 = 2147483648;

type Case = {
  name: string;
  call: Call;
  /** The field the detail must name (when a field is at fault). */
  field?: string;
  /** Expected status when it is certain; otherwise any 4xx. */
  status?: number;
};

let catalogId = 0;
let executionId = 0;

const keychainBody = { token_data: { t: 'x' }, credential_type: 'bearer' };
const event = { execution_id: 1, command_id: 1, attempt: 1, event_type: 'command.started' };

function corpus(): Case[] {
  const E = executionId;
  const C = catalogId;
  const cases: Case[] = [];
  // NUL and lone surrogates, in every place a string reaches the database.
  const badStrings: [string, string][] = [
    ['NUL', NUL],
    ['lone high surrogate', LONE_HIGH],
    ['lone low surrogate', LONE_LOW],
  ];
  for (const [what, s] of badStrings) {
    const esc = JSON.stringify(s).slice(1, -1); // how the detail shows it: escaped
    cases.push(
      { name: `${what} in a step name`, call: { method: 'POST', path: '/api/catalog/playbook', json: { content: playbookWith(s) } }, field: 'content', status: 422 },
      { name: `${what} in a workload key`, call: { method: 'POST', path: '/api/catalog/playbook', json: { content: playbookWith('start', `"${s}": 1`) } }, field: 'content', status: 422 },
      { name: `${what} in a payload key`, call: { method: 'POST', path: '/api/run/playbook', json: { path: 'corpus/ok', payload: { [s]: 1 } } }, field: `payload["${esc}"]`, status: 422 },
      { name: `${what} in a payload value`, call: { method: 'POST', path: '/api/run/playbook', json: { path: 'corpus/ok', payload: { x: [1, { y: s }] } } }, field: 'payload.x[1].y', status: 422 },
      { name: `${what} in an execute workload`, call: { method: 'POST', path: '/api/execute', json: { path: 'corpus/ok', workload: { k: s } } }, field: 'workload.k', status: 422 },
      { name: `${what} in a run path`, call: { method: 'POST', path: '/api/run/playbook', json: { path: s } }, field: 'path', status: 422 },
      { name: `${what} in a worker name`, call: { method: 'POST', path: '/api/worker/pool/register', json: { name: s, capacity: 1 } }, field: 'name', status: 422 },
      { name: `${what} in a claimer's worker_id`, call: { method: 'POST', path: '/api/worker/claim', json: { worker_id: s, max: 1 } }, field: 'worker_id', status: 422 },
      {
        name: `${what} in a report's context`,
        call: { method: 'POST', path: '/api/worker/report', json: { worker_id: 'w', events: [{ ...event, context: { out: s } }] } },
        field: 'events[0].context.out',
        status: 422,
      },
      { name: `${what} in an event's step`, call: { method: 'POST', path: '/api/events', json: { ...event, step: s } }, field: 'step', status: 422 },
      { name: `${what} in a credential's data key`, call: { method: 'POST', path: '/api/credentials', json: { name: 'c1', type: 'bearer', data: { [s]: 'v' } } }, field: `data["${esc}"]`, status: 422 },
      { name: `${what} in keychain token_data`, call: { method: 'POST', path: `/api/keychain/${C}/k1`, json: { ...keychainBody, token_data: { t: s } } }, field: 'token_data.t', status: 422 },
      { name: `${what} in an SQL query`, call: { method: 'POST', path: '/api/postgres/execute', json: { query: `SELECT '${s}'` } }, field: 'query', status: 422 },
      { name: `${what} in a cancel reason`, call: { method: 'POST', path: `/api/executions/${E}/cancel`, json: { reason: s } }, field: 'reason', status: 422 },
    );
  }
  cases.push(
    // NUL and surrogates written as YAML escapes: only the playbook parser sees them.
    { name: 'NUL as a YAML escape in a step name', call: { method: 'POST', path: '/api/catalog/playbook', json: { content: playbookWith('a\\0b') } }, field: 'workflow[0].step', status: 400 },
    { name: 'NUL as a YAML escape in a workload key', call: { method: 'POST', path: '/api/catalog/playbook', json: { content: playbookWith('start', '"k\\x00": 1') } }, field: 'workload["k\\u0000"]', status: 400 },
    { name: 'a lone surrogate as a YAML escape in a workload value', call: { method: 'POST', path: '/api/catalog/register', json: { content: playbookWith('start', 'k: "\\ud800"') } }, field: 'workload.k', status: 400 },
    {
      name: 'a catalog path of 5,000 characters (an index key PostgreSQL cannot hold)',
      call: { method: 'POST', path: '/api/catalog/register', json: { content: PLAYBOOK.replace('corpus/ok', INCOMPRESSIBLE_PATH) } },
      field: 'metadata.path',
      status: 400,
    },
    { name: 'a run path of 5,000 characters (no entry can be there)', call: { method: 'POST', path: '/api/run/playbook', json: { path: INCOMPRESSIBLE_PATH } }, field: 'path', status: 422 },
    { name: 'an execute path of 5,000 characters', call: { method: 'POST', path: '/api/execute', json: { path: INCOMPRESSIBLE_PATH } }, field: 'path', status: 422 },
    // NUL through the URL: path parameters and query strings.
    { name: 'NUL in a catalog path (URL)', call: { method: 'GET', path: '/api/catalog/playbook/a%00b' }, field: 'path', status: 422 },
    { name: 'NUL in a query filter ?path=', call: { method: 'GET', path: '/api/executions?path=a%00b' }, field: 'path', status: 422 },
    { name: 'NUL as ?status=', call: { method: 'GET', path: '/api/executions?status=%00' }, field: 'status', status: 422 },
    { name: 'NUL in ?kind=', call: { method: 'GET', path: '/api/catalog/playbooks?kind=%00' }, field: 'kind', status: 422 },
    { name: 'NUL in a credential search ?q=', call: { method: 'GET', path: '/api/credentials?q=x%00' }, field: 'q', status: 422 },
    { name: 'NUL in a query key', call: { method: 'GET', path: '/api/executions?a%00b=1' }, field: 'a\\u0000b', status: 422 },
    { name: 'NUL in a credential identifier (URL)', call: { method: 'GET', path: '/api/credentials/a%00b' }, field: 'name', status: 422 },
    { name: 'NUL in a keychain name (URL)', call: { method: 'DELETE', path: `/api/keychain/${C}/a%00b` }, field: 'keychain_name', status: 422 },
    { name: 'a UTF-8-encoded lone surrogate in a query (%ED%A0%80)', call: { method: 'GET', path: '/api/executions?path=%ED%A0%80' }, field: 'path', status: 400 },
    { name: 'an invalid percent escape in a query', call: { method: 'GET', path: '/api/executions?path=%E0%A4%A' }, field: 'path', status: 400 },
    { name: 'an invalid percent escape in a path', call: { method: 'GET', path: '/api/executions/%E0%A4%A' }, status: 400 },
    // Depth.
    { name: 'JSON 5,000 levels deep (payload)', call: { method: 'POST', path: '/api/run/playbook', raw: `{"path":"corpus/ok","payload":${deepObjectText(5_000)}}` }, field: 'payload.a.a', status: 422 },
    { name: 'JSON 100,000 levels deep (arrays)', call: { method: 'POST', path: '/api/run/playbook', raw: deepArrayText(100_000) }, field: '[0][0]', status: 422 },
    { name: 'JSON 100,000 levels deep (objects)', call: { method: 'POST', path: '/api/worker/report', raw: deepObjectText(100_000) }, field: 'a.a.a', status: 422 },
    { name: 'JSON 65 levels deep', call: { method: 'POST', path: '/api/run/playbook', json: { path: 'corpus/ok', payload: nested(64) } }, field: 'payload', status: 422 },
    // Numbers past what PostgreSQL or JavaScript hold.
    { name: 'since_event_id past bigint', call: { method: 'GET', path: `/api/events/${E}?since_event_id=${BIG}` }, field: 'since_event_id', status: 422 },
    { name: 'since_event_id past 2^53', call: { method: 'GET', path: `/api/events/${E}?since_event_id=${PAST_2_53}` }, field: 'since_event_id', status: 422 },
    { name: 'since_event_id negative', call: { method: 'GET', path: `/api/events/${E}?since_event_id=-1` }, field: 'since_event_id', status: 422 },
    { name: 'events limit past bigint', call: { method: 'GET', path: `/api/events/${E}?limit=${BIG}` }, field: 'limit', status: 422 },
    { name: 'cursor past bigint', call: { method: 'GET', path: `/api/executions?cursor=${BIG}` }, field: 'cursor', status: 422 },
    { name: 'cursor a float', call: { method: 'GET', path: '/api/executions?cursor=1.5' }, field: 'cursor', status: 422 },
    { name: 'limit past bigint', call: { method: 'GET', path: `/api/executions?limit=${BIG}` }, field: 'limit', status: 422 },
    { name: 'limit twice (an array)', call: { method: 'GET', path: '/api/executions?limit=1&limit=2' }, field: 'limit', status: 422 },
    { name: 'catalog ?version past int', call: { method: 'GET', path: `/api/catalog/playbook/corpus/ok?version=${PAST_INT4}` }, field: 'version', status: 422 },
    { name: 'catalog ?version past bigint', call: { method: 'GET', path: `/api/catalog/playbook/corpus/ok?version=${BIG}` }, field: 'version', status: 422 },
    { name: 'run version past int', call: { method: 'POST', path: '/api/run/playbook', json: { path: 'corpus/ok', version: PAST_INT4 } }, field: 'version', status: 422 },
    { name: 'run version past 2^53 (JSON text)', call: { method: 'POST', path: '/api/run/playbook', raw: `{"path":"corpus/ok","version":${BIG}}` }, field: 'version', status: 422 },
    { name: 'payload integer past 2^53', call: { method: 'POST', path: '/api/run/playbook', raw: `{"path":"corpus/ok","payload":{"n":${PAST_2_53}}}` }, field: 'payload.n', status: 422 },
    { name: 'payload number 1e400', call: { method: 'POST', path: '/api/run/playbook', raw: '{"path":"corpus/ok","payload":{"n":1e400}}' }, field: 'payload.n', status: 422 },
    { name: 'payload number -1e400', call: { method: 'POST', path: '/api/run/playbook', raw: '{"path":"corpus/ok","payload":{"n":[-1e400]}}' }, field: 'payload.n[0]', status: 422 },
    { name: 'ttl_seconds past int', call: { method: 'POST', path: `/api/keychain/${C}/k1`, json: { ...keychainBody, ttl_seconds: 1e20 } }, field: 'ttl_seconds', status: 422 },
    { name: 'ttl_seconds past bigint (JSON text)', call: { method: 'POST', path: `/api/keychain/${C}/k1`, raw: `{"token_data":{},"credential_type":"bearer","ttl_seconds":${BIG}}` }, field: 'ttl_seconds', status: 422 },
    { name: 'expires_at before year 1', call: { method: 'POST', path: `/api/keychain/${C}/k1`, json: { ...keychainBody, expires_at: '-271821-04-20T00:00:00Z' } }, field: 'expires_at', status: 422 },
    { name: 'capacity past int', call: { method: 'POST', path: '/api/worker/pool/register', json: { name: 'w1', capacity: PAST_INT4 } }, field: 'capacity', status: 422 },
    { name: 'capacity past bigint', call: { method: 'POST', path: '/api/worker/pool/register', raw: `{"name":"w1","capacity":${BIG}}` }, field: 'capacity', status: 422 },
    { name: 'capacity negative', call: { method: 'POST', path: '/api/worker/pool/register', json: { name: 'w1', capacity: -1 } }, field: 'capacity', status: 422 },
    { name: 'capacity a float', call: { method: 'POST', path: '/api/worker/pool/register', json: { name: 'w1', capacity: 1.5 } }, field: 'capacity', status: 422 },
    { name: 'heartbeat running id past 2^53', call: { method: 'POST', path: '/api/worker/pool/heartbeat', json: { name: 'w1', running: [2 ** 60] } }, field: 'running[0]', status: 422 },
    { name: 'event execution_id past 2^53', call: { method: 'POST', path: '/api/events', json: { ...event, execution_id: 2 ** 60 } }, field: 'execution_id', status: 422 },
    { name: 'event attempt past int', call: { method: 'POST', path: '/api/events', json: { ...event, attempt: PAST_INT4 } }, field: 'attempt', status: 422 },
    { name: 'batch execution_id 1e300 (JSON text)', call: { method: 'POST', path: '/api/events/batch', raw: '{"execution_id":1e300,"events":[{"event_type":"command.started"}]}' }, field: 'execution_id', status: 422 },
    { name: 'batch command_id 1e300 (JSON text)', call: { method: 'POST', path: '/api/events/batch', raw: `{"execution_id":${E},"events":[{"event_type":"command.started","command_id":1e300}]}` }, field: 'events[0].command_id', status: 422 },
    { name: 'batch attempt past int', call: { method: 'POST', path: '/api/events/batch', json: { execution_id: E, events: [{ event_type: 'command.started', attempt: PAST_INT4 }] } }, field: 'events[0].attempt', status: 422 },
    { name: 'report command_id past bigint', call: { method: 'POST', path: '/api/worker/report', json: { worker_id: 'w', events: [{ ...event, command_id: 1e19 }] } }, field: 'events[0].command_id', status: 422 },
    { name: 'execution id past bigint (URL)', call: { method: 'GET', path: `/api/executions/${BIG}` }, field: 'execution_id', status: 422 },
    { name: 'execution id past 2^53 (URL)', call: { method: 'GET', path: `/api/execution/${PAST_2_53}` }, field: 'execution_id', status: 422 },
    { name: 'execution id zero', call: { method: 'GET', path: '/api/executions/0' }, field: 'execution_id', status: 422 },
    { name: 'execution id negative', call: { method: 'GET', path: '/api/executions/-1' }, field: 'execution_id', status: 422 },
    { name: 'execution id a float', call: { method: 'GET', path: '/api/executions/1.5' }, field: 'execution_id', status: 422 },
    { name: 'event history id past bigint', call: { method: 'GET', path: `/api/events/${BIG}` }, field: 'execution_id', status: 422 },
    { name: 'cancel id past bigint', call: { method: 'POST', path: `/api/executions/${BIG}/cancel`, json: {} }, field: 'id', status: 422 },
    { name: 'claim command id past bigint', call: { method: 'POST', path: `/api/commands/${BIG}/claim`, json: { worker_id: 'w' } }, field: 'id', status: 422 },
    { name: 'keychain catalog_id past bigint', call: { method: 'GET', path: `/api/keychain/catalog/${BIG}` }, field: 'catalog_id', status: 422 },
    { name: 'keychain ?execution_id past bigint', call: { method: 'GET', path: `/api/keychain/${C}/k1?scope_type=local&execution_id=${BIG}` }, field: 'execution_id', status: 422 },
    { name: 'keychain body execution_id past 2^53', call: { method: 'POST', path: `/api/keychain/${C}/k1`, raw: `{"token_data":{},"credential_type":"bearer","scope_type":"local","execution_id":${PAST_2_53}}` }, field: 'execution_id', status: 422 },
    { name: 'SQL timeout_seconds 1e400', call: { method: 'POST', path: '/api/postgres/execute', raw: '{"query":"SELECT 1","timeout_seconds":1e400}' }, field: 'timeout_seconds', status: 422 },
    // Not JSON, or not the JSON expected.
    { name: 'invalid JSON (truncated)', call: { method: 'POST', path: '/api/run/playbook', raw: '{"path":' }, status: 400 },
    { name: 'invalid JSON (single quotes)', call: { method: 'POST', path: '/api/run/playbook', raw: "{'path':'x'}" }, status: 400 },
    { name: 'invalid JSON (trailing comma)', call: { method: 'POST', path: '/api/worker/report', raw: '{"worker_id":"w","events":[],}' }, status: 400 },
    { name: 'invalid JSON (NaN)', call: { method: 'POST', path: '/api/run/playbook', raw: '{"path":"x","payload":{"n":NaN}}' }, status: 400 },
    { name: 'a raw NUL byte in JSON text', call: { method: 'POST', path: '/api/run/playbook', raw: '{"path":"a\u0000b"}' }, status: 400 },
    { name: 'wrong content type (text/plain)', call: { method: 'POST', path: '/api/run/playbook', raw: '{"path":"corpus/ok"}', contentType: 'text/plain' }, status: 415 },
    { name: 'wrong content type (form)', call: { method: 'POST', path: '/api/credentials', raw: 'name=x&type=bearer', contentType: 'application/x-www-form-urlencoded' }, status: 415 },
    { name: 'a body without a content type', call: { method: 'POST', path: '/api/run/playbook', raw: '{"path":"corpus/ok"}', contentType: null } },
    { name: 'an empty JSON body', call: { method: 'POST', path: '/api/run/playbook', raw: '' }, status: 400 },
    { name: 'a JSON body of whitespace', call: { method: 'POST', path: '/api/worker/claim', raw: '   ' } },
    { name: 'an array for the body', call: { method: 'POST', path: '/api/run/playbook', json: [{ path: 'corpus/ok' }] }, status: 422 },
    { name: 'a string for the body', call: { method: 'POST', path: '/api/worker/report', json: 'hello' }, status: 422 },
    { name: 'null for the body', call: { method: 'POST', path: '/api/credentials', raw: 'null' }, status: 422 },
    { name: 'an array for the payload', call: { method: 'POST', path: '/api/run/playbook', json: { path: 'corpus/ok', payload: [1, 2] } }, field: 'payload', status: 422 },
    { name: 'an array for labels', call: { method: 'POST', path: '/api/worker/pool/register', json: { name: 'w1', labels: ['a'] } }, field: 'labels', status: 422 },
    { name: 'an array for token_data', call: { method: 'POST', path: `/api/keychain/${C}/k1`, json: { ...keychainBody, token_data: ['x'] } }, field: 'token_data', status: 422 },
    { name: 'a number for events', call: { method: 'POST', path: '/api/worker/report', json: { worker_id: 'w', events: 5 } }, field: 'events', status: 422 },
    { name: '__proto__ in a payload', call: { method: 'POST', path: '/api/run/playbook', raw: '{"path":"corpus/ok","payload":{"__proto__":{"x":1}}}' }, field: 'payload.__proto__', status: 400 },
    { name: 'constructor.prototype in a payload', call: { method: 'POST', path: '/api/run/playbook', raw: '{"path":"corpus/ok","payload":{"constructor":{"prototype":{"x":1}}}}' }, field: 'payload.constructor', status: 400 },
    { name: '__proto__ written with escapes', call: { method: 'POST', path: '/api/worker/report', raw: '{"worker_id":"w","events":[{"\\u005f_proto__":{}}]}' }, field: 'events[0].__proto__', status: 400 },
    { name: 'a body over the limit (9 MiB, Content-Length)', call: { method: 'POST', path: '/api/run/playbook', raw: `{"path":"corpus/ok","payload":{"x":"${'a'.repeat(9 * 1024 * 1024)}"}}` }, status: 413 },
    { name: 'a 16 MiB body (chunked)', call: { method: 'POST', path: '/api/worker/report', raw: Buffer.alloc(16 * 1024 * 1024, ' '), chunked: true }, status: 413 },
    { name: 'a 16 MiB body, read after it is all sent', call: { method: 'POST', path: '/api/worker/report', raw: Buffer.alloc(16 * 1024 * 1024, ' '), allThenRead: true }, status: 413 },
  );
  return cases;
}

beforeAll(async () => {
  t = await startTestApp();
  const reg = await send({ method: 'POST', path: '/api/catalog/playbook', json: { content: PLAYBOOK } });
  expect(reg.status).toBe(201);
  catalogId = reg.body.catalog_id;
  const run = await send({ method: 'POST', path: '/api/run/playbook', json: { path: 'corpus/ok' } });
  expect(run.status).toBe(200);
  executionId = run.body.execution_id;
});
afterAll(async () => t?.close());

describe('bad input never gets a 500', () => {
  it('answers every request of the corpus with a 4xx naming the field, no stack trace, and stores nothing', async () => {
    const cases = corpus();
    expect(cases.length).toBeGreaterThanOrEqual(80);
    const before = await rowCounts();
    const failures: string[] = [];
    for (const c of cases) {
      let a: Answer;
      try {
        a = await (c.call.allThenRead ? sendAllThenRead(c.call) : send(c.call));
      } catch (err) {
        failures.push(`${c.name}: no answer the client could read (${String(err)})`);
        continue;
      }
      const problems: string[] = [];
      if (a.status < 400 || a.status > 499) problems.push(`status ${a.status}`);
      if (c.status !== undefined && a.status !== c.status) problems.push(`status ${a.status}, expected ${c.status}`);
      if (STACK_TRACE.test(a.text)) problems.push('a stack trace or source path in the body');
      if (!a.body || typeof a.body !== 'object' || !('detail' in a.body)) problems.push('no JSON detail');
      else if (c.field !== undefined && !detailText(a.body.detail).includes(c.field)) problems.push(`detail does not name ${c.field}`);
      if (problems.length) failures.push(`${c.name}: ${problems.join('; ')}: ${a.text.slice(0, 300)}`);
    }
    expect(failures).toEqual([]);
    expect(await rowCounts()).toEqual(before);
  });

  it('refuses a value outside an enumeration naming the field and every value it takes', async () => {
    const status = await send({ method: 'GET', path: '/api/executions?status=bogus' });
    expect(status.status).toBe(422);
    expect(status.body.detail.errors).toEqual(['status: must be one of queued, running, paused, completed, failed, cancelled']);
    const kind = await send({ method: 'POST', path: '/api/catalog/register', json: { content: PLAYBOOK, resource_type: 'bogus' } });
    expect(kind.status).toBe(422);
    expect(kind.body.detail.errors).toEqual(['resource_type: must be one of playbook, agent, mcp']);
  });

  it('accepts JSON 64 levels deep, and integers up to 2^53-1', async () => {
    // 64 levels: the body object, then the payload and 62 more objects inside it.
    const ok = await send({ method: 'POST', path: '/api/run/playbook', json: { path: 'corpus/ok', payload: nested(63) } });
    expect(ok.status, ok.text).toBe(200);
    const big = await send({ method: 'POST', path: '/api/run/playbook', raw: `{"path":"corpus/ok","payload":{"n":9007199254740991,"m":-9007199254740991,"f":1.5e300}}` });
    expect(big.status, big.text).toBe(200);
    const since = await send({ method: 'GET', path: `/api/events/${executionId}?since_event_id=9007199254740991` });
    expect(since.status, since.text).toBe(200);
    expect(since.body.events).toEqual([]);
  });

  it('accepts free-form unicode (RTL, zero-width, emoji, combining marks) and stores it as sent', async () => {
    const values = {
      rtl: 'مرحبا بالعالم',
      zero_width: 'a\u200bb\u200dc\ufeff',
      emoji: '😀👩‍👩‍👧 \ud83d\ude80',
      combining: 'e\u0301 Z\u0335\u0321\u031b',
      'ключ 键 🔑': 'значение',
    };
    const run = await send({ method: 'POST', path: '/api/run/playbook', json: { path: 'corpus/ok', payload: values } });
    expect(run.status, run.text).toBe(200);
    const events = await send({ method: 'GET', path: `/api/events/${run.body.execution_id}` });
    expect(events.body.events[0].context.input.workload).toMatchObject(values);
    const worker = await send({ method: 'POST', path: '/api/worker/pool/register', json: { name: 'wörker-🚀-\u200b', capacity: 1 } });
    expect(worker.status, worker.text).toBe(200);
    expect(worker.body.name).toBe('wörker-🚀-\u200b');
  });

  it('lets a client that sends 16 MiB before it reads read the 413 and its JSON detail', async () => {
    for (const chunked of [false, true]) {
      const a = await sendAllThenRead({ method: 'POST', path: '/api/run/playbook', raw: Buffer.alloc(16 * 1024 * 1024, ' '), chunked });
      expect(a.status).toBe(413);
      expect(a.body).toEqual({ detail: expect.stringContaining('too large') });
    }
    // The server still answers afterwards.
    expect((await send({ method: 'GET', path: '/api/health' })).status).toBe(200);
  });
});
