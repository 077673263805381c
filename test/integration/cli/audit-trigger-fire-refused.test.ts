// `svc triggers fire` of a payload the playbook's inputs refuse printed the refusal twice (the
// server's message quotes its one problem, `payload: …`, which was listed again under it), and
// with --json wrote nothing on stdout, where svc run --json and svc cleanup --json put a refusal.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { http } from '../../helpers/http.ts';
import { runSvc } from '../../helpers/process.ts';

const PLAYBOOK = `apiVersion: svc/v1
kind: Playbook
metadata: { name: typed, path: cli/triggers/typed }
inputs:
  n: { type: integer, required: true }
triggers:
  - { name: yearly, kind: schedule, cron: "0 0 1 1 *", payload: { n: 1 } }
workflow:
  - step: start
    tool: { name: t, kind: noop }
`;

let a: TestApp;
beforeAll(async () => {
  a = await startTestApp();
  const reg = await http(a.url, 'POST', '/api/catalog/playbook', { content: PLAYBOOK });
  expect(reg.status, JSON.stringify(reg.body)).toBe(201);
});
afterAll(async () => {
  await a?.close();
});

describe('svc triggers fire, refused by the inputs', () => {
  it('says the refusal once, exit 1', async () => {
    const r = await runSvc(['triggers', 'fire', 'cli/triggers/typed', 'yearly', '--payload', '{"n": "x"}'], { SVC_SERVER_URL: a.url });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('workload.n: must be integer, got string');
    expect(r.stderr.split('workload.n: must be integer, got string').length - 1).toBe(1);
    expect(r.stdout).toBe('');
  });

  it('with --json puts the refusal on stdout as JSON', async () => {
    const r = await runSvc(['triggers', 'fire', 'cli/triggers/typed', 'yearly', '--payload', '{"n": "x"}', '--json'], { SVC_SERVER_URL: a.url });
    expect(r.code).toBe(1);
    const answer = JSON.parse(r.stdout);
    expect(answer).toMatchObject({ status: 422, detail: { code: 'fire_refused', errors: [expect.stringContaining('workload.n: must be integer')] } });
  });
});
