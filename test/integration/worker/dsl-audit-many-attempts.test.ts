// A task retried many times (a poll: `retry: {attempts: 200}` against a target answering 503 with
// a page of HTML) reported every failed attempt as a call.attempt with its output: 200 outputs of
// ~60 KiB came to more than the server takes in one report (8 MiB), so the report was refused and
// the command failed `report_rejected` ("unprocessable" / "too large"): the task's own error
// (http_status) and every attempt were lost. The report now keeps the first and the last failed
// attempts (MAX_RECORDED_ATTEMPTS), and call.error still counts them all.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { http, type Json } from '../../helpers/http.ts';
import { startTestStack, type TestStack } from '../../helpers/stack.ts';

let s: TestStack;
let target: Server;
let hits = 0;
beforeAll(async () => {
  s = await startTestStack({ workers: 1 });
  const page = `<html>${'x'.repeat(60 * 1024)}</html>`;
  target = createServer((_req, res) => {
    hits++;
    res.writeHead(503, { 'content-type': 'text/html' }).end(page);
  });
  await new Promise<void>((ok) => target.listen(0, '127.0.0.1', ok));
}, 120_000);
afterAll(async () => {
  await s?.close();
  target?.close();
});

it("keeps a task's own error and a bounded set of its attempts however often it was retried", async () => {
  const { port } = target.address() as AddressInfo;
  await s.register(`apiVersion: svc/v1
metadata: { name: poll, path: audit/many-attempts }
workflow:
  - step: start
    tool: { name: poll, kind: http, url: "http://127.0.0.1:${port}/ready", retry: { attempts: 200 } }
`);
  const id = await s.run('audit/many-attempts');
  const final = await s.wait(id, 60_000);
  expect(hits).toBe(200);
  expect(final, JSON.stringify(final.error)).toMatchObject({ status: 'failed', error: { code: 'http_status', step: 'start' } });
  const events = (await s.events(id)) as Json[];
  const attempts = events.filter((e) => e.event_type === 'call.attempt').map((e) => e.context.attempt);
  expect(attempts).toEqual([...[1, 2, 3, 4, 5, 6, 7, 8, 9, 10], ...Array.from({ length: 10 }, (_, i) => 190 + i)]);
  expect(events.find((e) => e.event_type === 'call.error').context).toMatchObject({ task: 'poll', attempts: 200 });
  const runs = (await http(s.url, 'GET', `/api/executions/${id}/steps/start`)).body.runs;
  expect(runs[0].tasks[0].attempts.map((a: Json) => a.attempt).at(-1)).toBe(200);
}, 90_000);
