// `svc triggers list|pause|resume|fire|backfill` as a person and a program use it, against a real
// server: the table and --json, pause and resume, a fire by hand with typed --set values and a
// fire key (a repeat starts nothing), a backfill twice (the second starts nothing), the API's
// refusals printed with exit 1, a viewer refused what needs an operator, usage errors and an
// unreachable server.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { bearer, createApiToken } from '../../helpers/auth.ts';
import { http } from '../../helpers/http.ts';
import { runSvc } from '../../helpers/process.ts';

const PLAYBOOK = `apiVersion: svc/v1
kind: Playbook
metadata: { name: nightly, path: cli/triggers/nightly }
inputs:
  day: { type: string, default: none }
  limit: { type: integer, default: 1 }
triggers:
  - name: nightly
    kind: schedule
    cron: "0 2 * * *"
    timezone: Europe/Berlin
    overlap: allow
    payload: { day: "{{ trigger.scheduled_time.split('T')[0] }}" }
workflow:
  - step: start
    tool: { name: t, kind: noop }
`;

let a: TestApp;
let env: Record<string, string>;
beforeAll(async () => {
  a = await startTestApp();
  env = { SVC_SERVER_URL: a.url };
  const reg = await http(a.url, 'POST', '/api/catalog/playbook', { content: PLAYBOOK });
  expect(reg.status, JSON.stringify(reg.body)).toBe(201);
});
afterAll(async () => {
  await a?.close();
});

const svc = (args: string[], extra: Record<string, string> = {}) => runSvc(['triggers', ...args], { ...env, ...extra });

async function workloadOf(executionId: number): Promise<unknown> {
  const { rows } = await a.deps.db.query<{ workload: unknown }>(`SELECT context->'input'->'workload' AS workload FROM core.event WHERE execution_id = $1 AND event_type = 'execution.started'`, [executionId]);
  return rows[0]?.workload;
}

describe('svc triggers', () => {
  it('lists as a table and as the API answer; pauses and resumes', async () => {
    const table = await svc(['list']);
    expect(table, table.stderr).toMatchObject({ code: 0, stderr: '' });
    const [header, row, ...rest] = table.stdout.trimEnd().split('\n');
    expect(rest).toEqual([]);
    expect(header).toMatch(/^PATH\s+NAME\s+KIND\s+STATE\s+NEXT FIRE\s+LAST FIRE\s+FIRES\/SKIPPED\/ERRORS$/);
    // 02:00 in Berlin is 00:00 or 01:00 UTC, within a day from now (6h05m, or 12m30s when close).
    expect(row).toMatch(/^cli\/triggers\/nightly\s+nightly\s+schedule\s+active\s+\d{4}-\d\d-\d\dT0[01]:00:00Z \(in [\dhms.]+\)\s+-\s+0\/0\/0$/);

    const json = await svc(['list', '--json', '--kind', 'schedule']);
    expect(json.code).toBe(0);
    const answer = JSON.parse(json.stdout);
    expect(answer).toMatchObject({ count: 1, triggers: [{ path: 'cli/triggers/nightly', name: 'nightly', kind: 'schedule', state: 'active', last_fire: null, fires: 0, spec: { cron: '0 2 * * *', timezone: 'Europe/Berlin', overlap: 'allow', catch_up: 'latest' } }] });
    expect(answer.triggers[0].next_fires).toHaveLength(3);
    expect((await svc(['list', '--kind', 'webhook'])).stdout).toBe('no webhook triggers\n');
    // Without a subcommand it lists, as `svc limits` does (the countdown to the next fire moves on
    // between the two calls: a loaded machine crossed a minute once).
    const countdownless = (r: typeof table) => ({ ...r, stdout: r.stdout.replace(/\(in [\dhms.]+\)/g, '(in …)') });
    expect(countdownless(await svc([]))).toEqual(countdownless(table));
    expect(await svc(['--kind', 'webhook'])).toMatchObject({ code: 0, stdout: 'no webhook triggers\n' });

    const paused = await svc(['pause', 'cli/triggers/nightly', 'nightly']);
    expect(paused, paused.stderr).toMatchObject({ code: 0, stdout: 'cli/triggers/nightly nightly: paused\n' });
    expect((await svc(['list'])).stdout).toMatch(/nightly\s+schedule\s+paused\s+-\s+-\s+0\/0\/0\n$/);
    const resumed = await svc(['resume', 'cli/triggers/nightly', 'nightly', '--json']);
    expect(resumed.code).toBe(0);
    expect(JSON.parse(resumed.stdout)).toMatchObject({ state: 'active', next_fires: [expect.any(String), expect.any(String), expect.any(String)] });
  });

  it('fires by hand with typed --set values over the schedule payload; the same fire key again starts nothing', async () => {
    const before = new Date().toISOString().slice(0, 10);
    const fired = await svc(['fire', 'cli/triggers/nightly', 'nightly', '--set', 'limit=5', '--payload', '{"extra": true}', '--fire-key', 'cli-1']);
    const after = new Date().toISOString().slice(0, 10);
    expect(fired, fired.stderr).toMatchObject({ code: 0, stderr: '' });
    const id = Number(/^execution (\d+) started \(trigger nightly of cli\/triggers\/nightly, fire key cli-1\)\n$/.exec(fired.stdout)?.[1]);
    expect(id).toBeGreaterThan(0);
    // The schedule's own payload (scheduled_time = now), --payload and the typed --set over it.
    expect(await workloadOf(id)).toEqual({ day: expect.toBeOneOf([before, after]), limit: 5, extra: true });

    const again = await svc(['fire', 'cli/triggers/nightly', 'nightly', '--fire-key', 'cli-1', '--json']);
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout)).toEqual({ execution_id: id, duplicate: true, fire_key: 'cli-1', outcome: 'started', debounced: false });
    expect((await svc(['fire', 'cli/triggers/nightly', 'nightly', '--fire-key', 'cli-1'])).stdout).toBe(`fire key cli-1 was fired before (started: execution ${id}); nothing new started\n`);

    expect((await svc(['list'])).stdout).toMatch(new RegExp(`nightly\\s+schedule\\s+active\\s+\\S+ \\(in \\S+\\)\\s+#${id} started \\d+\\.\\ds ago\\s+1/0/0\\n$`));
    // A value that is not of its declared type is refused before anything is sent.
    const wrong = await svc(['fire', 'cli/triggers/nightly', 'nightly', '--set', 'limit=many']);
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toContain('--set limit: must be integer, got "many"');
  });

  it('says a fire of a debounced playbook joined the open window, not that it started an execution', async () => {
    const reg = await http(a.url, 'POST', '/api/catalog/playbook', {
      content: `apiVersion: svc/v1
kind: Playbook
metadata: { name: batched, path: cli/triggers/batched }
debounce: { key: all, seconds: 60 }
triggers:
  - { name: tick, kind: schedule, cron: "0 3 * * *" }
workflow:
  - step: start
    tool: { name: t, kind: noop }
`,
    });
    expect(reg.status, JSON.stringify(reg.body)).toBe(201);
    const opened = await svc(['fire', 'cli/triggers/batched', 'tick', '--fire-key', 'b-1', '--json']);
    expect(opened.code, opened.stderr).toBe(0);
    const first = JSON.parse(opened.stdout);
    expect(first).toMatchObject({ duplicate: false, outcome: 'started', debounced: false });
    const joined = await svc(['fire', 'cli/triggers/batched', 'tick', '--fire-key', 'b-2']);
    expect(joined, joined.stderr).toMatchObject({ code: 0, stderr: '' });
    expect(joined.stdout).toBe(`joined the open debounce window of execution ${first.execution_id}: it runs with this fire's payload unless a later start comes (trigger tick of cli/triggers/batched, fire key b-2)\n`);
    const again = await svc(['fire', 'cli/triggers/batched', 'tick', '--fire-key', 'b-3', '--json']);
    expect(JSON.parse(again.stdout)).toEqual({ execution_id: first.execution_id, duplicate: false, fire_key: 'b-3', outcome: 'started', debounced: true });
  });

  it('backfills a range once: the same range again starts nothing new', async () => {
    const range = ['--from', '2026-01-01T00:00:00Z', '--to', '2026-01-04T00:00:00Z'];
    const first = await svc(['backfill', 'cli/triggers/nightly', 'nightly', ...range, '--json']);
    expect(first, first.stderr).toMatchObject({ code: 0 });
    const started = JSON.parse(first.stdout);
    expect(started).toMatchObject({ skipped: 0, refused: [] });
    expect(started.execution_ids).toHaveLength(3);
    // 02:00 Berlin (UTC+1 in January) is 01:00 UTC; each fire's payload has its own day.
    expect(await workloadOf(started.execution_ids[0])).toEqual({ day: '2026-01-01', limit: 1 });
    const again = await svc(['backfill', 'cli/triggers/nightly', 'nightly', ...range]);
    expect(again, again.stderr).toMatchObject({ code: 0, stdout: 'started 0 executions; 3 fires already made or skipped\n' });
  });

  it('a backfill whose fires the inputs refuse says so and exits 1, not "already made"', async () => {
    const refusing = PLAYBOOK.replace('cli/triggers/nightly', 'cli/triggers/refusing').replace('day: { type: string, default: none }', 'day: { type: integer, default: 1 }');
    const reg = await http(a.url, 'POST', '/api/catalog/playbook', { content: refusing });
    expect(reg.status, JSON.stringify(reg.body)).toBe(201);
    const range = ['--from', '2026-01-01T00:00:00Z', '--to', '2026-01-03T00:00:00Z'];
    const text = await svc(['backfill', 'cli/triggers/refusing', 'nightly', ...range]);
    expect(text.code, text.stderr).toBe(1);
    expect(text.stdout).toBe('started 0 executions; 0 fires already made or skipped\n');
    expect(text.stderr).toMatch(/^svc triggers: 2 fires of the range started nothing \(recorded as refused\):\n  - 2026-01-01T01:00:00\.000Z: .*workload\.day: must be integer, got string\n  - 2026-01-02T01:00:00\.000Z: /);
    // The table says why under it (the counts alone do not).
    const listed = await svc(['list']);
    expect(listed.stdout).toMatch(/cli\/triggers\/refusing\s+nightly\s+schedule\s+active\s.*\s0\/0\/2\n\ncli\/triggers\/refusing nightly: last error: .*workload\.day: must be integer, got string\n$/);
    // Recorded: the range again has them as made before.
    const json = await svc(['backfill', 'cli/triggers/refusing', 'nightly', ...range, '--json']);
    expect(json.code, json.stderr).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual({ execution_ids: [], skipped: 2, refused: [] });
  });

  it("prints the API's detail and exits by its status when it refuses (4 not found, 1 a 422); usage errors exit 2; an unreachable server exits 3", async () => {
    const unknown = await svc(['pause', 'cli/triggers/nightly', 'nope']);
    expect(unknown.code).toBe(4);
    expect(unknown.stderr).toBe('svc triggers: POST /api/triggers/cli/triggers/nightly/nope/pause: HTTP 404 trigger nope of cli/triggers/nightly not found\n');
    const tooMany = await svc(['backfill', 'cli/triggers/nightly', 'nightly', '--from', '2020-01-01T00:00:00Z', '--to', '2026-01-01T00:00:00Z']);
    expect(tooMany.code).toBe(1);
    expect(tooMany.stderr).toContain('HTTP 422 the range holds more than 1000 fires: backfill a shorter one\n  - to: at most 1000 fires per backfill');
    const notIso = await svc(['backfill', 'cli/triggers/nightly', 'nightly', '--from', 'yesterday', '--to', '2026-01-01T00:00:00Z']);
    expect(notIso.code).toBe(1);
    expect(notIso.stderr).toContain('must be an ISO 8601 time');

    for (const args of [['explode'], ['pause', 'cli/triggers/nightly'], ['list', '--from', 'x'], ['backfill', 'cli/triggers/nightly', 'nightly'], ['fire', 'p', 'n', '--payload', '[1]'], ['list', '--kind', 'cron']]) {
      const r = await svc(args);
      expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(2);
      expect(r.stderr).toMatch(/^svc triggers: .+\nusage: svc triggers \[list\]/);
    }
    expect((await svc(['list'], { SVC_SERVER_URL: 'http://127.0.0.1:1' })).code).toBe(3);
    const help = await runSvc(['triggers', '--help'], env);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('svc triggers backfill PATH NAME --from ISO --to ISO');
  });
});

describe('svc triggers against SVC_AUTH=token', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ SVC_AUTH: 'token' });
  });
  afterAll(async () => t?.close());

  it('sends SVC_API_TOKEN: a viewer lists, an operator pauses, the viewer is refused a pause (exit 6, the detail printed)', async () => {
    const operator = await createApiToken(t.deps.db, 'ops', 'operator');
    const viewer = await createApiToken(t.deps.db, 'look', 'viewer');
    expect((await http(t.url, 'POST', '/api/catalog/playbook', { content: PLAYBOOK }, bearer(operator))).status).toBe(201);
    const as = (token: string) => ({ SVC_SERVER_URL: t.url, SVC_API_TOKEN: token });
    expect((await runSvc(['triggers', 'list'], { SVC_SERVER_URL: t.url })).code).toBe(6);
    expect((await runSvc(['triggers', 'list'], as(viewer))).stdout).toContain('cli/triggers/nightly');
    const refused = await runSvc(['triggers', 'pause', 'cli/triggers/nightly', 'nightly'], as(viewer));
    expect(refused.code).toBe(6);
    expect(refused.stderr).toMatch(/^svc triggers: POST \/api\/triggers\/cli\/triggers\/nightly\/nightly\/pause: HTTP 403 .+/);
    expect((await runSvc(['triggers', 'pause', 'cli/triggers/nightly', 'nightly'], as(operator))).stdout).toBe('cli/triggers/nightly nightly: paused\n');
  });
});
