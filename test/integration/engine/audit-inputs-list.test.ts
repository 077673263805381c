// `inputs:` is a mapping of names to declarations (DESIGN.md "Authoring"). Written as a list (a
// plausible slip: the names listed), it was read as a mapping keyed "0", "1", ...: the problems
// blamed `inputs["0"]` for not being an identifier, and an empty list registered as no inputs.
// Real server, real PostgreSQL.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { http } from '../../helpers/http.ts';

const playbook = (path: string, inputs: string) => `apiVersion: svc/v1
kind: Playbook
metadata: { name: listed, path: ${path} }
inputs: ${inputs}
workflow:
  - step: start
    tool: { name: t, kind: noop }
`;

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => t?.close());

describe('inputs written as a list', () => {
  for (const [label, inputs] of [
    ['names', '[limit, mode]'],
    ['declarations', '[{ type: string }]'],
    ['empty', '[]'],
  ] as const) {
    it(`${label}: 400, one problem at inputs saying it must be a mapping, nothing registered`, async () => {
      const path = `inputs/listed-${label}`;
      const r = await http(t.url, 'POST', '/api/catalog/playbook', { content: playbook(path, inputs) });
      expect(r.status, JSON.stringify(r.body)).toBe(400);
      expect(r.body.detail.problems).toEqual([{ path: 'inputs', message: 'expected Object, got Array', line: 4, column: 1 }]);
      expect((await http(t.url, 'GET', `/api/catalog/playbook/${path}`)).status).toBe(404);
    });
  }
});
