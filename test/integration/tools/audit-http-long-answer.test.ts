// An http task waits for its answer as long as its `timeout_seconds` says (or, without one, until
// it comes): a report that takes ten minutes to make is asked for with `timeout_seconds: 900`. The
// connection pool tasks go through (TASK_DISPATCHER, src/worker/tools/metadata-guard.ts) kept
// undici's own limits, 300 s for the answer's headers and 300 s between two parts of its body: such
// a task failed at 300 s as `connection` ('UND_ERR_HEADERS_TIMEOUT (Headers Timeout Error)'), which
// a retry.when on connection then sent again, to be cut again. The clock undici counts with is
// advanced here (fake timers, so the tool is called in this process, not by a worker process)
// against a real HTTP server on port 0 that answers after 400 s of it.
import { afterAll, afterEach, beforeAll, expect, it, vi } from 'vitest';
import { http } from '../../../src/worker/tools/http.ts';
import { startHttpTarget, type HttpTarget } from '../../helpers/http-target.ts';

let target: HttpTarget;
beforeAll(async () => {
  target = await startHttpTarget(async (_req, res, recorded) => {
    if (recorded.path === '/slow-headers') {
      await new Promise((resolve) => setTimeout(resolve, 400_000));
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"report":"done"}');
    } else if (recorded.path === '/slow-body') {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write('first part, ');
      await new Promise((resolve) => setTimeout(resolve, 400_000));
      res.end('last part');
    }
  });
});
afterAll(async () => target?.close());
afterEach(() => {
  vi.useRealTimers();
});

// One stretch of fake time for both: undici's tick timer is made once, with the first request.
it('waits past 300 s for the answer\'s headers, and between two parts of its body', async () => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
  const call = (path: string) => http({ name: 't', kind: 'http', url: `${target.url}${path}`, timeout_seconds: 900 }, { signal: AbortSignal.timeout(900_000), env: {} });
  const outcomes = Promise.all([call('/slow-headers'), call('/slow-body')]);
  // Undici counts its timeouts in ticks of a 1 s timer: 420 of them, each let run.
  for (let i = 0; i < 420; i++) await vi.advanceTimersByTimeAsync(1_000);
  vi.useRealTimers();
  const [headers, body] = await outcomes;
  expect(headers).toMatchObject({ status: 'ok', data: { status: 200, body: { report: 'done' } } });
  expect(body).toMatchObject({ status: 'ok', data: { status: 200, body: 'first part, last part' } });
}, 60_000);
