// An `inputs:` default outside its enum was refused 'must be one of the enum values', naming
// neither the values nor the default, where a start's refusal of the same value names both; and a
// type written as another language names it (`int`, `str`, `bool`) got no "did you mean", as no
// edit distance reaches `integer` from `int`. Both now say what was meant.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { http } from '../../helpers/http.ts';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => t?.close());

it('names the enum and the one meant, at registration and at a start alike', async () => {
  const content = `apiVersion: svc/v1
metadata: { name: words, path: audit/input-words }
inputs:
  mode:  { type: string, enum: [fast, slow], default: fsat }
  limit: { type: int }
  name:  { type: str }
  dry:   { type: bool }
  tags:  { type: list }
workflow:
  - step: start
`;
  const res = await http(t.url, 'POST', '/api/catalog/playbook', { content });
  expect(res.status, JSON.stringify(res.body)).toBe(400);
  const types = 'must be one of string, integer, boolean, number, array, object';
  expect(res.body.detail.problems).toEqual([
    { path: 'inputs.mode.default', line: 4, column: 46, message: `must be one of "fast", "slow", got "fsat" (did you mean 'fast'?)` },
    { path: 'inputs.limit.type', line: 5, column: 12, message: `${types} (did you mean 'integer'?)` },
    { path: 'inputs.name.type', line: 6, column: 12, message: `${types} (did you mean 'string'?)` },
    { path: 'inputs.dry.type', line: 7, column: 12, message: `${types} (did you mean 'boolean'?)` },
    { path: 'inputs.tags.type', line: 8, column: 12, message: `${types} (did you mean 'array'?)` },
  ]);

  const fixed = content.replace('default: fsat', 'default: fast').replace('int }', 'integer }').replace('str }', 'string }').replace('bool }', 'boolean }').replace('list }', 'array }');
  expect((await http(t.url, 'POST', '/api/catalog/playbook', { content: fixed })).status).toBe(201);
  const start = await http(t.url, 'POST', '/api/run/playbook', { path: 'audit/input-words', payload: { mode: 'slwo' } });
  expect(start.status).toBe(422);
  expect(start.body.detail.problems).toEqual([{ path: 'workload.mode', message: `must be one of "fast", "slow", got "slwo" (did you mean 'slow'?)` }]);
});
