// `svc inspect` wrote the step names of its lines raw: a step named "gate\x1b[31m!" coloured the
// terminal from `active: gate` on, and one named "boom\x1b[0m\r" sent the cursor back to the
// start of the line, where svc status, svc logs, svc signal and svc retry write such a name
// `gate\u001b[31m!` (docs/cli.md: nothing from data colours or moves the terminal). Its lines now
// escape control characters as every table and detail does; --json keeps them as they are.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { executionApi } from '../../helpers/execution-api.ts';
import { http } from '../../helpers/http.ts';
import { spawnSvc, waitForOutput } from '../../helpers/process.ts';
import { until } from '../../helpers/until.ts';

// The first step waits for a signal (no worker needed); the second fails at once (its `until` is
// not a time), so the execution ends and both streams close.
const GATED = `apiVersion: svc/v1
kind: Playbook
metadata: { name: gated, path: cli/inspect-names/gated }
workflow:
  - step: "gate\\e[31m!"
    wait: { signal: go }
    next: "boom\\e[0m\\r"
  - step: "boom\\e[0m\\r"
    wait: { until: "{{ 'never' }}" }
`;
const CONTROL = /[\x00-\x09\x0b-\x1f\x7f-\x9f]/;

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
  await executionApi(t.url).register(GATED);
});
afterAll(async () => {
  await t?.close();
});

it('svc inspect writes step names escaped; --json keeps them as they are', async () => {
  const api = executionApi(t.url);
  const id = await api.run('cli/inspect-names/gated');
  await until('the gate waits', async () => (await http(t.url, 'GET', `/api/executions/${id}/state`)).body.steps?.['gate\x1b[31m!']?.status === 'waiting');
  const lines = spawnSvc(['inspect', String(id)], { SVC_SERVER_URL: t.url });
  const json = spawnSvc(['inspect', String(id), '--json'], { SVC_SERVER_URL: t.url });
  await waitForOutput(lines, 'execution.started', 15_000);
  await waitForOutput(json, 'gate', 15_000);
  expect((await http(t.url, 'POST', `/api/executions/${id}/signals/go`, { payload: {} })).status).toBe(202);
  expect(await lines.exited).toBe(0);
  expect(await json.exited).toBe(0);

  const text = lines.output();
  expect(text.replace(/\n/g, '')).not.toMatch(CONTROL);
  expect(text).toMatch(/\nexecution\.started\s+running\s+active: gate\\u001b\[31m! \(waiting\)\n/);
  expect(text).toContain('gate\\u001b[31m! completed');
  expect(text).toContain('boom\\u001b[0m\\r failed');
  // --json is for programs: the names as the server sent them (JSON escapes them itself).
  expect(json.output()).toContain('"gate\\u001b[31m!"');
}, 30_000);
