// A task within its caps never makes a report the server refuses. Every part of a report was held
// to its own cap (an http body to 8 MiB, an attempt's output to SVC_TASK_OUTPUT_BYTES), but the
// report is their JSON: quotes and control characters escaped (`"` is 2 bytes, U+0001 6), the
// answer's headers, the events around them and up to 20 failed attempts. Such a report came to
// more than the server's 8 MiB body limit and the command failed `report_rejected`, the task's own
// outcome lost. The worker now measures the report it sends: past the limit, failed attempts'
// outputs are cut first, then the largest task outcome becomes `response_too_large`.
// A real server and a real worker over HTTP; the answers come from a real HTTP server on port 0.
import { Writable } from 'node:stream';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { BODY_LIMIT_BYTES } from '../../../src/body-limit.ts';
import { createLogger } from '../../../src/log.ts';
import { Worker } from '../../../src/worker/worker.ts';
import type { Json } from '../../helpers/http.ts';
import { startHttpTarget, type HttpTarget } from '../../helpers/http-target.ts';
import { startTestStack, type TestStack } from '../../helpers/stack.ts';
import { until } from '../../helpers/until.ts';

const MIB = 1024 * 1024;
// A body just under the answer's cap: with its headers and the events around it, over the report's.
const JUST_UNDER = 'x'.repeat(BODY_LIMIT_BYTES - 100);
// One whose report, with all that, still fits: it is not cut.
const FITS = 'x'.repeat(BODY_LIMIT_BYTES - 4096);
// 2 MiB of U+0001: 12 MiB once written as JSON (`\u0001`).
const CONTROL = '\u0001'.repeat(2 * MIB);
// A failed attempt's page: 60 KiB of quotes, each written `\"`, its preview escaped once more.
const QUOTES = '"'.repeat(60 * 1024);
const FAILURES = 20;
// A JSON answer just under 8 MiB of `\u0000` escapes: each NUL is stored as the six characters
// `\u0000` (PostgreSQL holds no NUL), which JSON writes in 7 bytes.
const NUL_JSON = `"${'\\u0000'.repeat(Math.floor((BODY_LIMIT_BYTES - 16) / 6))}"`;
// Reports of commands that finish together go in one request: four of 3 MiB each.
const TOGETHER = 4;
const QUARTER = 'z'.repeat(3 * MIB);
const waiting: (() => void)[] = [];
const FINAL = 'y'.repeat(6.5 * MIB);

let s: TestStack;
let target: HttpTarget;
let flakyCalls = 0;
/** Status of every answered POST /api/worker/report. */
const reportAnswers: number[] = [];

beforeAll(async () => {
  target = await startHttpTarget((_req, res, recorded): Promise<void> | undefined => {
    const text = (status: number, body: string) => void res.writeHead(status, { 'content-type': 'text/plain' }).end(body);
    if (recorded.path === '/just-under') text(200, JUST_UNDER);
    else if (recorded.path === '/fits') text(200, FITS);
    else if (recorded.path === '/control') text(200, CONTROL);
    else if (recorded.path === '/nul-json') void res.writeHead(200, { 'content-type': 'application/json' }).end(NUL_JSON);
    else if (recorded.path === '/together') {
      // Answered at once when all have asked: their commands finish in the same moment.
      const answered = new Promise<void>((resolve) => waiting.push(() => resolve(text(200, QUARTER))));
      if (waiting.length === TOGETHER) for (const answer of waiting.splice(0)) answer();
      return answered;
    } else if (recorded.path === '/flaky-quotes') text(flakyCalls++ < FAILURES ? 503 : 200, flakyCalls <= FAILURES ? QUOTES : FINAL);
    return undefined;
  });
  s = await startTestStack({ workers: 1 });
  s.app.server.on('request', (req, res) => {
    if (req.url === '/api/worker/report') res.once('finish', () => reportAnswers.push(res.statusCode));
  });
}, 120_000);
afterAll(async () => {
  await s?.close();
  await target?.close();
});

async function runOne(name: string, tool: string): Promise<{ final: Json; events: Json[] }> {
  await s.register(`apiVersion: svc/v1
metadata: { name: ${name}, path: report-size/${name} }
workflow:
  - step: start
    tool: ${tool}
`);
  const id = await s.run(`report-size/${name}`);
  const final = await s.wait(id, 60_000);
  return { final, events: (await s.events(id)) as Json[] };
}

it('a body just under 8 MiB, whose report is over it, fails its task response_too_large, not report_rejected', async () => {
  const { final, events } = await runOne('just-under', `{ name: fetch, kind: http, url: "${target.url}/just-under" }`);
  expect(final, JSON.stringify(final.error)).toMatchObject({ status: 'failed', error: { code: 'response_too_large', step: 'start' } });
  const failed = events.find((e) => e.event_type === 'command.failed');
  expect(failed.error).toMatchObject({ code: 'response_too_large', task: 'fetch' });
  expect(failed.error.message).toMatch(/more than a report carries/);
  expect(failed.result.tasks.fetch).toMatchObject({ status: 'error', data: null, error: { code: 'response_too_large' } });
  expect(events.find((e) => e.event_type === 'call.error').error).toMatchObject({ code: 'response_too_large' });
  expect(reportAnswers).not.toContain(413);
}, 90_000);

it('a body whose report fits is carried whole', async () => {
  const { final, events } = await runOne('fits', `{ name: fetch, kind: http, url: "${target.url}/fits" }`);
  expect(final, JSON.stringify(final.error)).toMatchObject({ status: 'completed' });
  expect(events.find((e) => e.event_type === 'command.completed').result.tasks.fetch.data.body).toBe(FITS);
}, 90_000);

it('a body of characters JSON writes as escapes fails response_too_large, not report_rejected', async () => {
  const { final } = await runOne('control', `{ name: fetch, kind: http, url: "${target.url}/control" }`);
  expect(final, JSON.stringify(final.error)).toMatchObject({ status: 'failed', error: { code: 'response_too_large' } });
  expect(reportAnswers).not.toContain(413);
}, 90_000);

it('a JSON answer just under 8 MiB that grows as it is stored fails response_too_large, not report_rejected', async () => {
  expect(Buffer.byteLength(NUL_JSON)).toBeLessThan(BODY_LIMIT_BYTES);
  const { final } = await runOne('nul-json', `{ name: fetch, kind: http, url: "${target.url}/nul-json" }`);
  expect(final, JSON.stringify(final.error)).toMatchObject({ status: 'failed', error: { code: 'response_too_large' } });
  expect(reportAnswers).not.toContain(413);
}, 90_000);

it('reports that together are over 8 MiB go in several requests, each within it', async () => {
  // A stand-in server that speaks the worker protocol: it hands out four commands at once, and
  // answers each report late, so the reports of commands that finish meanwhile gather.
  const bodies: { bytes: number; commands: number[] }[] = [];
  let handedOut = false;
  const fake = await startHttpTarget((_req, res, recorded) => {
    const answer = (body: unknown): void => void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    if (recorded.path === '/api/worker/claim') {
      if (handedOut) return new Promise<void>((r) => setTimeout(() => r(answer({ commands: [] })), 200));
      handedOut = true;
      const command = (id: number) => ({
        command_id: id, execution_id: id, catalog_id: 1, path: 'x', step: 'start', seq: 1, loop_index: null, status: 'CLAIMED', attempt: 1, worker_id: 'w',
        tasks: [{ name: 'fetch', kind: 'http', url: `${target.url}/together` }], context: {}, keychain: [],
      });
      return answer({ commands: Array.from({ length: TOGETHER }, (_, i) => command(i + 1)) });
    }
    if (recorded.path === '/api/worker/report') {
      const { events } = JSON.parse(recorded.body) as { events: { event_type: string; command_id: number }[] };
      bodies.push({ bytes: Buffer.byteLength(recorded.body), commands: events.filter((e) => e.event_type === 'command.completed').map((e) => e.command_id) });
      const results = events.map((_, i) => ({ event_id: i + 1 }));
      return new Promise<void>((r) => setTimeout(() => r(answer({ status: 'ok', results, commands_generated: 0, commands: [] })), 500));
    }
    if (recorded.path.startsWith('/api/worker/pool/')) return answer({ status: 'ok', name: 'w', cancelled: [], superseded: [] });
    return undefined;
  });
  const w = new Worker({ serverUrl: fake.url, token: 't', concurrency: TOGETHER, env: {}, log: createLogger('error', new Writable({ write: (_c, _e, cb) => cb() })), claimWaitMs: 200 });
  try {
    await w.start();
    await until('every command is reported', () => bodies.flatMap((b) => b.commands).length >= TOGETHER, 30_000);
    expect(bodies.flatMap((b) => b.commands).sort()).toEqual(Array.from({ length: TOGETHER }, (_, i) => i + 1));
    for (const { bytes } of bodies) expect(bytes).toBeLessThanOrEqual(BODY_LIMIT_BYTES);
  } finally {
    await w.stop();
    await fake.close();
  }
}, 90_000);

it("cuts failed attempts' outputs before the task's own outcome: the answer is kept whole", async () => {
  const { final, events } = await runOne(
    'flaky-quotes',
    `{ name: fetch, kind: http, url: "${target.url}/flaky-quotes", retry: { attempts: ${FAILURES + 1}, delay_seconds: 0 } }`,
  );
  expect(final, JSON.stringify(final.error)).toMatchObject({ status: 'completed' });
  const completed = events.find((e) => e.event_type === 'command.completed');
  expect(completed.result.tasks.fetch.data.body).toBe(FINAL);
  const attempts = events.filter((e) => e.event_type === 'call.attempt');
  expect(attempts).toHaveLength(FAILURES);
  // Each still says what failed; some outputs are cut to nothing but their size.
  for (const a of attempts) expect(a.error).toMatchObject({ code: 'http_status' });
  expect(attempts.some((a) => a.result.output.truncated === true && a.result.output.preview === '')).toBe(true);
  expect(reportAnswers).not.toContain(413);
}, 90_000);
