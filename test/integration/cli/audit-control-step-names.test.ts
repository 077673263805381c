// `svc signal` and `svc retry` wrote the step names of their answers raw: a step named
// "gate\x1b[31m!" coloured the terminal from `signal go delivered to step gate…` on, and a retry's
// `from step …` and `(replayed: …)` did the same (piped too), where `svc status` and `svc logs`
// write such a name `gate\u001b[31m!` (docs/cli.md: nothing from data colours or moves the
// terminal). Their lines now escape control characters as every table and detail does, and so
// does every server error svc writes (a 422 quoting the playbook's step names).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { executionApi } from '../../helpers/execution-api.ts';
import { runSvc } from '../../helpers/process.ts';
import { until } from '../../helpers/until.ts';

// The first step waits for a signal (no worker needed); the second fails at once (its `until` is
// not a time), so the execution fails there and a retry replays the first.
const GATED = `apiVersion: svc/v1
kind: Playbook
metadata: { name: gated, path: cli/step-names/gated }
workflow:
  - step: "gate\\e[31m!"
    wait: { signal: go }
    next: "boom\\e[0m\\r"
  - step: "boom\\e[0m\\r"
    wait: { until: "{{ 'never' }}" }
`;
const CONTROL = /[\x00-\x09\x0b-\x1f\x7f-\x9f]/;

let t: TestApp;
let env: Record<string, string>;
beforeAll(async () => {
  t = await startTestApp();
  env = { SVC_SERVER_URL: t.url };
  await executionApi(t.url).register(GATED);
});
afterAll(async () => {
  await t?.close();
});

describe('svc signal and svc retry, of steps named with control characters', () => {
  it('write the step names escaped; --json keeps them as they are', async () => {
    const api = executionApi(t.url);
    const id = await api.run('cli/step-names/gated');
    await until('the gate waits', async () => ((await (await fetch(`${t.url}/api/executions/${id}`)).json()) as { waits_count?: number }).waits_count === 1, 20_000, 100);

    const signalled = await runSvc(['signal', String(id), 'go'], env);
    expect(signalled, signalled.stderr).toMatchObject({ code: 0, stderr: '' });
    expect(signalled.stdout).not.toMatch(CONTROL);
    expect(signalled.stdout).toMatch(/^signal go delivered to step gate\\u001b\[31m! of execution \d+ \(event \d+\)\n$/);
    expect((await api.wait(id)).status).toBe('failed');

    const retried = await runSvc(['retry', String(id)], env);
    expect(retried, retried.stderr).toMatchObject({ code: 0, stderr: '' });
    expect(retried.stdout).not.toMatch(CONTROL);
    expect(retried.stdout).toMatch(new RegExp(`^execution \\d+ started: a retry of ${id} from step boom\\\\u001b\\[0m\\\\r \\(replayed: gate\\\\u001b\\[31m!\\)\\n$`));

    // The server's refusal quotes the playbook's step names: stderr escapes them too.
    const refused = await runSvc(['retry', String(id), '--from', 'nope'], env);
    expect(refused.code, refused.stderr).not.toBe(0);
    expect(refused.stderr).toContain('its steps: gate\\u001b[31m!, boom\\u001b[0m\\r');
    expect(refused.stderr.replace(/\n/g, '')).not.toMatch(CONTROL);

    const json = JSON.parse((await runSvc(['retry', String(id), '--json'], env)).stdout);
    expect(json).toMatchObject({ retry_of: id, from_step: 'boom\x1b[0m\r', replayed: ['gate\x1b[31m!'] });
  });
});
