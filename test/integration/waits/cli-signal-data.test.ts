// `svc signal ID NAME --data JSON` as a real process against a real server: the payload is any JSON
// value, sent as given, as the API takes it (`signal.payload`). It was read as a JSON object only
// (`--data true` was a usage error, exit 2) and through a record schema that dropped the keys
// `constructor`, `prototype` and `__proto__`: the step got `{}` where `{"constructor": "x"}` was sent.
//
// It was also read with JSON.parse: a number no double holds was
// changed without a word, `--data '{"amount": 1e400}'` delivered {"amount": null} (Infinity,
// written by JSON.stringify as null) and the step went on with it (exit 0), where the API refuses
// the same body (422 payload.amount: a number out of range); an integer past 2^53 went rounded and
// the refusal named a number never typed. Such a value is now a usage error naming it as typed
// (exit 2), nothing sent, the step still waiting; the numbers a double holds go as before.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { http, type Json } from '../../helpers/http.ts';
import { runSvc } from '../../helpers/process.ts';
import { until } from '../../helpers/until.ts';

let s: TestApp;
beforeAll(async () => {
  s = await startTestApp();
  const reg = await http(s.url, 'POST', '/api/catalog/playbook', {
    content: `
apiVersion: svc/v1
metadata: { name: gate, path: cli_signal/gate }
workflow:
  - step: hold
    wait: { signal: go }
`,
  });
  expect(reg.status, JSON.stringify(reg.body)).toBe(201);
});
afterAll(async () => {
  await s?.close();
});

async function waitingExecution(): Promise<number> {
  const started = await http(s.url, 'POST', '/api/run/playbook', { path: 'cli_signal/gate' });
  const id = started.body.execution_id as number;
  await until(`execution ${id} waits`, async () => ((await http(s.url, 'GET', `/api/executions/${id}`)).body.waits as Json[] | undefined)?.length === 1, 10_000);
  return id;
}

describe('svc signal --data', () => {
  it.each([
    ['true', true],
    ['[1, "two"]', [1, 'two']],
    ['"yes"', 'yes'],
    ['{"constructor": "x", "prototype": 1, "approved": true}', { constructor: 'x', prototype: 1, approved: true }],
  ])('%s is the payload the step gets', async (data, payload) => {
    const id = await waitingExecution();
    const out = await runSvc(['signal', String(id), 'go', '--data', data], { SVC_SERVER_URL: s.url });
    expect(out, out.stderr).toMatchObject({ code: 0, stderr: '' });
    expect(out.stdout).toMatch(new RegExp(`^signal go delivered to step hold of execution ${id} \\(event \\d+\\)\\n$`));
    const done = await until(`execution ${id} completed`, async () => {
      const body = (await http(s.url, 'GET', `/api/executions/${id}`)).body;
      return body.status === 'completed' && body;
    }, 10_000);
    expect(done.result).toEqual(payload);
  });

  it('that is not JSON is a usage error (exit 2), and nothing is sent', async () => {
    const id = await waitingExecution();
    const out = await runSvc(['signal', String(id), 'go', '--data', '{nope'], { SVC_SERVER_URL: s.url });
    expect(out.code).toBe(2);
    expect(out.stderr).toMatch(/^svc signal: --data is not valid JSON/);
    expect((await http(s.url, 'GET', `/api/executions/${id}`)).body.waits).toHaveLength(1);
  });
});

describe('svc signal --data with a number JSON cannot carry', () => {
  it.each([
    ['{"amount": 1e400}', '1e400'],
    ['[-1e999]', '-1e999'],
    ['{"id": 9007199254740993}', '9007199254740993'],
  ])('%s is a usage error naming %s; nothing is sent', async (data, number) => {
    const id = await waitingExecution();
    const out = await runSvc(['signal', String(id), 'go', '--data', data], { SVC_SERVER_URL: s.url });
    expect(out.code, out.stdout + out.stderr).toBe(2);
    expect(out.stderr).toContain(`svc signal: --data holds the number ${number}, which JSON cannot carry exactly`);
    expect(out.stdout).toBe('');
    const body = (await http(s.url, 'GET', `/api/executions/${id}`)).body;
    expect(body).toMatchObject({ status: 'running', waits: [{ step: 'hold', kind: 'signal', signal: 'go' }] });
    expect((await http(s.url, 'POST', `/api/executions/${id}/cancel`, {})).status).toBe(200);
  });

  it('a number a double holds goes as it is', async () => {
    const id = await waitingExecution();
    const out = await runSvc(['signal', String(id), 'go', '--data', '{"amount": 1.5e300, "id": 9007199254740991}'], { SVC_SERVER_URL: s.url });
    expect(out, out.stderr).toMatchObject({ code: 0, stderr: '' });
    const done = await until(`execution ${id} completed`, async () => {
      const body = (await http(s.url, 'GET', `/api/executions/${id}`)).body;
      return body.status === 'completed' && body;
    }, 10_000);
    expect(done.result).toEqual({ amount: 1.5e300, id: 9007199254740991 });
  });
});
