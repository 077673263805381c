// `svc list`'s filters beyond status, path and since, as a real process against a real server:
// the list's time range, parent, trigger, caller and search (GET /api/executions' parent,
// started_before, trigger, requested_by, q), each a usage error before anything is sent when
// malformed; `svc status` of a parent naming its children; and the execution's answer saying who
// or what started it (what --by and --trigger find it by).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { http } from '../../helpers/http.ts';
import { runSvc } from '../../helpers/process.ts';
import { startTestStack, type TestStack } from '../../helpers/stack.ts';

const CHILD = `apiVersion: svc/v1
metadata: { name: kid, path: cli/filters/kid }
workflow:
  - step: start
`;
const PARENT = `apiVersion: svc/v1
metadata: { name: parent, path: cli/filters/parent }
triggers:
  - { name: nightly_filters, kind: schedule, cron: "@daily" }
workflow:
  - step: start
    tool: { name: sub, kind: playbook, path: cli/filters/kid }
`;

let s: TestStack;
let parent: number;
let fired: number;
beforeAll(async () => {
  s = await startTestStack();
  await s.register(CHILD);
  await s.register(PARENT);
  parent = await s.run('cli/filters/parent');
  await s.wait(parent);
  const fire = await http(s.url, 'POST', '/api/triggers/cli/filters/parent/nightly_filters/fire', {});
  expect(fire.status, JSON.stringify(fire.body)).toBeLessThan(300);
  fired = Number(fire.body.execution_id);
  await s.wait(fired);
});
afterAll(async () => {
  await s?.close();
});

const ids = async (args: string[]): Promise<number[]> => {
  const r = await runSvc(['list', '--json', ...args], { SVC_SERVER_URL: s.url });
  expect(r, r.stderr).toMatchObject({ code: 0, stderr: '' });
  return (JSON.parse(r.stdout).executions as { execution_id: number }[]).map((e) => e.execution_id);
};

describe('svc list filters', () => {
  it('by parent, trigger, caller, search and time range', async () => {
    const [child] = await ids(['--parent', String(parent)]);
    expect(child).toBeGreaterThan(0);
    expect(await ids(['--parent', String(parent)])).toEqual([child]);
    expect(await ids(['--trigger', 'nightly_filters'])).toEqual([fired]);
    expect(await ids(['--by', 'local', '--path-prefix', 'cli/filters/parent'])).toEqual([parent]);
    expect(await ids(['--search', String(parent)])).toEqual([parent]);
    expect(await ids(['--search', 'FILTERS/KID'])).toHaveLength(2);
    expect(await ids(['--until', '2020-01-01'])).toEqual([]);
    expect(await ids(['--until', new Date(Date.now() + 60_000).toISOString(), '--path-prefix', 'cli/filters/'])).toHaveLength(4);
  });

  it('malformed filters are usage errors (exit 2) naming the option', async () => {
    for (const [args, stderr] of [
      [['--parent', 'abc'], /^svc list: --parent expects an execution ID/],
      [['--until', 'later'], /^svc list: --until expects an ISO 8601 time/],
      // Text Date.parse reads but the list refuses (no zone; a bare year): refused here, not by the server.
      [['--since', '2026-11-01T08:00:00'], /^svc list: --since expects an ISO 8601 time/],
      [['--until', '1'], /^svc list: --until expects an ISO 8601 time/],
      [['--since', '2026-02-30'], /^svc list: --since expects an ISO 8601 time/],
    ] as const) {
      const r = await runSvc(['list', ...args], { SVC_SERVER_URL: s.url });
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toMatch(stderr);
    }
  });
});

describe('svc status of a parent', () => {
  it('names its children, and a child its parent', async () => {
    const [child] = await ids(['--parent', String(parent)]);
    const shown = await runSvc(['status', String(parent)], { SVC_SERVER_URL: s.url });
    expect(shown, shown.stderr).toMatchObject({ code: 0, stderr: '' });
    expect(shown.stdout).toContain(`\n  children  ${child} (cli/filters/kid, completed)\n`);
    expect((await runSvc(['status', String(child)], { SVC_SERVER_URL: s.url })).stdout).toContain(`\n  parent    ${parent}\n`);
  });
});

describe('GET /api/executions/{id}', () => {
  it('says who started it, or which trigger; a child neither', async () => {
    const [child] = await ids(['--parent', String(parent)]);
    expect((await http(s.url, 'GET', `/api/executions/${parent}`)).body).toMatchObject({ requested_by: 'local', trigger: null });
    expect((await http(s.url, 'GET', `/api/executions/${fired}`)).body).toMatchObject({ requested_by: null, trigger: 'nightly_filters' });
    expect((await http(s.url, 'GET', `/api/executions/${child}`)).body).toMatchObject({ requested_by: null, trigger: null });
  });
});
