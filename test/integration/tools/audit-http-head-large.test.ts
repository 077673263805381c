// A HEAD request (is the backup there, how large is it?) and a conditional GET answered 304 carry
// no body, only the Content-Length of the resource they describe. The http task read that header
// as the length of a body to come: for a resource over 8 MiB it failed `response_too_large`
// ('answered a body over 8 MiB … not read further') though there was nothing to read. Run by a
// real `svc worker` against a real HTTP server on port 0.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startHttpTarget, type HttpTarget } from '../../helpers/http-target.ts';
import { startWorkerStack, type WorkerStack } from '../../helpers/worker-process.ts';

const LARGE = String(100 * 1024 * 1024);

let target: HttpTarget;
let s: WorkerStack;
beforeAll(async () => {
  target = await startHttpTarget((req, res, recorded) => {
    if (recorded.path !== '/backup.tar') return;
    const unchanged = req.headers['if-none-match'] === '"v1"';
    res.writeHead(unchanged ? 304 : 200, { 'content-type': 'application/octet-stream', 'content-length': LARGE, etag: '"v1"' }).end();
  });
  s = await startWorkerStack({ workers: 1 });
}, 120_000);
afterAll(async () => {
  await s?.close();
  await target?.close();
});

it('a HEAD of a large resource and a 304 to a conditional GET complete, with its headers and no body', async () => {
  await s.register(`
apiVersion: svc/v1
metadata: { name: head_large, path: audit/head_large }
workflow:
  - step: start
    tool:
      - { name: head, kind: http, method: HEAD, url: "{{ workload.base }}/backup.tar" }
      - { name: cached, kind: http, url: "{{ workload.base }}/backup.tar", headers: { If-None-Match: '"v1"' } }
`);
  const id = await s.run('audit/head_large', { base: target.url });
  const final = await s.wait(id);
  expect(final.error).toBeNull();
  expect(final.status).toBe('completed');
  const done = (await s.events(id)).find((e) => e.event_type === 'command.completed');
  const { head, cached } = done.result.tasks;
  expect(head).toMatchObject({ status: 'ok', data: { status: 200, headers: { 'content-length': LARGE, etag: '"v1"' } } });
  expect(cached).toMatchObject({ status: 'ok', data: { status: 304, headers: { 'content-length': LARGE } } });
  expect(head.data.body === null || head.data.body === '').toBe(true);
}, 60_000);
