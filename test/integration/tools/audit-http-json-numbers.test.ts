// An http task's JSON answer was read with JSON.parse: an id past 2^53 (a tweet's, a snowflake
// id) came back rounded, 9007199254740993 as 9007199254740992, and was stored as that wrong text;
// a fraction past a double's digits lost them and 1e400 became Infinity, stored as null. Each
// number is now kept as a postgres task keeps a json value's: a number where it reads back as
// the very value, else its text. Through a real worker and server the stored outcome is the same.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { http } from '../../../src/worker/tools/http.ts';
import { startHttpTarget, type HttpTarget } from '../../helpers/http-target.ts';
import { startTestStack, type TestStack } from '../../helpers/stack.ts';

const ANSWER = '{"id": 9007199254740993, "ids": [9007199254740993, -12345678901234567890], "price": 10.50, "count": 3, "pi": 3.14159265358979323846, "tiny": 1E-7, "huge": 1e400, "name": "9007199254740993"}';
const EXACT = { id: '9007199254740993', ids: ['9007199254740993', '-12345678901234567890'], price: 10.5, count: 3, pi: '3.14159265358979323846', tiny: 1e-7, huge: '1e400', name: '9007199254740993' };

let target: HttpTarget;
let s: TestStack;
beforeAll(async () => {
  target = await startHttpTarget((_req, res, recorded) => {
    if (recorded.path === '/ids') res.writeHead(200, { 'content-type': 'application/json' }).end(ANSWER);
  });
  s = await startTestStack({ workers: 1 });
}, 120_000);
afterAll(async () => {
  await s?.close();
  await target?.close();
});

it('keeps the numbers of a JSON answer exact', async () => {
  const outcome = await http({ name: 'h', kind: 'http', url: `${target.url}/ids` }, { signal: new AbortController().signal, env: {} });
  expect(outcome).toMatchObject({ status: 'ok', data: { status: 200, body: EXACT } });
});

it('stores them exact through a real worker and server', async () => {
  await s.register(`apiVersion: svc/v1
kind: Playbook
metadata: { name: ids, path: audit/http-ids }
workflow:
  - step: start
    tool: { name: h, kind: http, url: "${target.url}/ids" }
`);
  const done = await s.wait(await s.run('audit/http-ids'));
  expect(done).toMatchObject({ status: 'completed', result: { status: 200, body: EXACT } });
});
