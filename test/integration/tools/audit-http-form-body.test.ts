// An http task that said its body is a form (content-type: application/x-www-form-urlencoded,
// as a token endpoint or a legacy API wants) and gave a mapping sent the mapping's JSON text under
// that type: the server read one field named '{"grant_type":"client_credentials",…}'. A mapping
// body is now sent form-encoded under a form type (a list's values as repeated fields, none left
// out, a nested value as its JSON text); anything but a mapping there is invalid_task.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { http } from '../../../src/worker/tools/http.ts';
import { startHttpTarget, type HttpTarget } from '../../helpers/http-target.ts';

let target: HttpTarget;
beforeAll(async () => {
  target = await startHttpTarget();
});
afterAll(async () => target?.close());

const run = (fields: Record<string, unknown>) => http({ name: 't', kind: 'http', method: 'POST', url: `${target.url}/echo`, ...fields }, { signal: new AbortController().signal, env: {} });

it('sends a mapping body form-encoded under a form content type', async () => {
  const outcome = await run({
    headers: { 'Content-Type': 'application/x-www-form-urlencoded; charset=utf-8' },
    body: { grant_type: 'client_credentials', scope: ['a b', 'c&d'], n: 7, ok: true, skip: null, nested: { x: 1 }, 'é': 'ü' },
  });
  expect(outcome.status).toBe('ok');
  const sent = target.requests.at(-1)!;
  expect(sent.headers['content-type']).toBe('application/x-www-form-urlencoded; charset=utf-8');
  expect([...new URLSearchParams(sent.body)]).toEqual([
    ['grant_type', 'client_credentials'],
    ['scope', 'a b'],
    ['scope', 'c&d'],
    ['n', '7'],
    ['ok', 'true'],
    ['nested', '{"x":1}'],
    ['é', 'ü'],
  ]);
});

it('refuses a body that is not a mapping under a form content type, and keeps JSON otherwise', async () => {
  expect(await run({ headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: [1, 2] })).toMatchObject({
    status: 'error',
    error: { code: 'invalid_task', message: expect.stringContaining('body') },
  });
  expect(await run({ headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'a=1&b=2' })).toMatchObject({ status: 'ok' });
  expect(target.requests.at(-1)!.body).toBe('a=1&b=2');
  expect(await run({ body: { a: 1 } })).toMatchObject({ status: 'ok' });
  expect(target.requests.at(-1)!.body).toBe('{"a":1}');
});
