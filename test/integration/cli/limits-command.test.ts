// `svc limits [list]|show|set|delete`, `svc run --priority` and a debounced `svc run` as a person
// and a program use them, against a real server with a real worker, each run as a real process:
// set (created, replaced, what a replaced part was), the table and --json, a limit's keys after a
// limited task ran, a limit a playbook names before it is defined (its execution queued, shown by
// `svc limits` and `svc status`, deleting it refused while its key holds or queues work, run once
// it is defined), a task's command waiting for room shown by `svc status`, a playbook's inline
// limit listed and shown, and the exit codes (not found 4, conflict 5, not allowed 6, usage 2,
// unreachable 3).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { bearer, createApiToken } from '../../helpers/auth.ts';
import { http } from '../../helpers/http.ts';
import { runSvc } from '../../helpers/process.ts';
import { startTestStack, type TestStack } from '../../helpers/stack.ts';
import { until } from '../../helpers/until.ts';

// A task whose command waits for room and tokens on the key of its customer.
const PARTNER = `apiVersion: svc/v1
kind: Playbook
metadata: { name: partner, path: cli/limits/partner }
inputs:
  customer: { type: string, default: acme }
workflow:
  - step: start
    tool: { name: call, kind: noop, limit: { name: cli-partner, key: "{{ workload.customer }}" } }
`;
// Executions queued per tenant on a named limit (not defined when the first one starts); an
// admitted one holds its slot until it is sent the signal `go`.
const TENANT = `apiVersion: svc/v1
kind: Playbook
metadata: { name: tenant, path: cli/limits/tenant }
inputs:
  tenant: { type: string, default: none }
concurrency: { limit: cli-tenant, key: "{{ workload.tenant }}" }
workflow:
  - step: hold
    wait: { signal: go, timeout: 1h }
    next: done
  - step: done
    tool: { name: t, kind: noop }
`;
// An inline limit: kept as @cli/limits/inline.
const INLINE = `apiVersion: svc/v1
kind: Playbook
metadata: { name: inline, path: cli/limits/inline }
concurrency: { limit: 1 }
workflow:
  - step: start
    tool: { name: t, kind: noop }
`;

// A burst of starts for one customer within 30 s makes one execution.
const DEBOUNCED = `apiVersion: svc/v1
kind: Playbook
metadata: { name: debounced, path: cli/limits/debounced }
inputs:
  customer: { type: string, default: c1 }
debounce: { key: "{{ workload.customer }}", seconds: 30 }
workflow:
  - step: start
    tool: { name: t, kind: noop }
`;

let s: TestStack;
let env: Record<string, string>;
beforeAll(async () => {
  s = await startTestStack();
  env = { SVC_SERVER_URL: s.url };
  for (const playbook of [PARTNER, TENANT, INLINE, DEBOUNCED]) await s.register(playbook);
});
afterAll(async () => {
  await s?.close();
});

const svc = (args: string[], extra: Record<string, string> = {}) => runSvc(['limits', ...args], { ...env, ...extra });
const lines = (text: string) => text.trimEnd().split('\n');
// Every form of the command, so a mistake in `set` shows how `set` is written.
const USAGE_LINE = /\nusage: svc limits \[list\] \[--json\] \[--server URL\]\n {7}svc limits show NAME .*\n {7}svc limits set NAME .*\n {7}svc limits delete NAME .*\n$/;

describe('svc limits', () => {
  it('sets a limit, replaces it (saying what a part was), lists it as a table and as JSON, shows its keys, deletes it', async () => {
    const created = await svc(['set', 'cli-partner', '--rate', '10/1s', '--burst', '5']);
    expect(created).toMatchObject({ code: 0, stdout: 'limit cli-partner created: rate 10/1s burst 5\n', stderr: '' });
    const replaced = await svc(['set', 'cli-partner', '--concurrency', '2']);
    expect(replaced).toMatchObject({ code: 0, stdout: 'limit cli-partner replaced: concurrency 2 (was: rate 10/1s burst 5)\n' });
    expect((await svc(['set', 'cli-partner', '--concurrency', '2'])).stdout).toBe('limit cli-partner unchanged: concurrency 2\n');
    const json = await svc(['set', 'cli-partner', '--concurrency', '2', '--rate', '100/m', '--json']);
    expect(json, json.stderr).toMatchObject({ code: 0 });
    expect(JSON.parse(json.stdout)).toMatchObject({ name: 'cli-partner', defined: true, concurrency: 2, rate: { limit: 100, period_seconds: 60, burst: 100 }, created: false, keys: 0 });

    // A limited task ran: its key shows, its slot given back, a token taken from the bucket.
    const ran = await runSvc(['run', 'cli/limits/partner', '--set', 'customer=acme', '--wait', '--json'], env);
    expect(ran, ran.stderr).toMatchObject({ code: 0 });
    expect(JSON.parse(ran.stdout)).toMatchObject({ status: 'completed' });

    const table = await svc(['list']);
    expect(table, table.stderr).toMatchObject({ code: 0, stderr: '' });
    const [header, ...rows] = lines(table.stdout);
    expect(header).toMatch(/^NAME\s+CONCURRENCY\s+RATE\s+KEYS\s+RUNNING\s+QUEUED\s+WAITING$/);
    expect(rows).toContainEqual(expect.stringMatching(/^cli-partner\s+2\s+100\/1m burst 100\s+1\s+0\s+0\s+0$/));
    const listed = JSON.parse((await svc(['--json'])).stdout);
    expect(listed.limits).toContainEqual(expect.objectContaining({ name: 'cli-partner', defined: true, concurrency: 2, keys: 1, running: 0, queued: 0, waiting: 0 }));

    const shown = await svc(['show', 'cli-partner']);
    expect(shown, shown.stderr).toMatchObject({ code: 0, stderr: '' });
    expect(shown.stdout).toMatch(/^limit cli-partner\n {2}allows {3}concurrency 2, rate 100\/1m burst 100\n {2}keys {5}1\n {2}running {2}0\n {2}queued {3}0\n {2}waiting {2}0\n {2}updated {2}\S+ \(.+ ago\)\n\nKEY\s+RUNNING\s+QUEUED\s+WAITING\s+TOKENS\s+LAST SERVED\nacme\s+0\s+0\s+0\s+\d+(\.\d+)?\s+\S+ \(.+ ago\)\n$/);
    const detail = JSON.parse((await svc(['show', 'cli-partner', '--keys', '5', '--json'])).stdout);
    expect(detail).toMatchObject({ name: 'cli-partner', key_list: [{ key: 'acme', running: 0, queued: 0, waiting: 0, tokens: expect.any(Number), served_at: expect.any(String) }] });

    // A second key, and --keys 1: the busiest first, a line saying more are there.
    expect((await runSvc(['run', 'cli/limits/partner', '--set', 'customer=zeta', '--wait'], env)).code).toBe(0);
    expect(lines((await svc(['show', 'cli-partner', '--keys', '1'])).stdout).at(-1)).toBe('1 of 2 keys shown, busiest first: --keys N for more');

    expect(await svc(['delete', 'cli-partner'])).toMatchObject({ code: 0, stdout: 'limit cli-partner deleted\n', stderr: '' });
    const again = await svc(['delete', 'cli-partner', '--json']);
    // With --json the refusal is on stdout too, as JSON (docs/cli.md), its text on stderr as without.
    expect(again).toMatchObject({ code: 4, stderr: 'svc limits: DELETE /api/limits/cli-partner: HTTP 404 limit cli-partner not found\n' });
    expect(JSON.parse(again.stdout)).toEqual({ error: 'DELETE /api/limits/cli-partner: HTTP 404 limit cli-partner not found', status: 404, detail: 'limit cli-partner not found' });
    // Its playbook still names it: shown as not defined, its keys gone with it; a name nobody uses is not found.
    const undefinedNow = await svc(['show', 'cli-partner']);
    expect(undefinedNow, undefinedNow.stderr).toMatchObject({ code: 0, stderr: '' });
    expect(undefinedNow.stdout).toBe('limit cli-partner\n  allows   not defined (its work waits until it is)\n  keys     0\n  running  0\n  queued   0\n  waiting  0\n\nno keys in use\n');
    expect((await svc(['show', 'cli-nobody-names'])).code).toBe(4);
  });

  it('svc run --wait says when its execution is queued on a limit and when it is admitted', async () => {
    expect((await svc(['set', 'cli-tenant', '--concurrency', '1'])).code).toBe(0);
    const holder = Number(/^execution (\d+) started/.exec((await runSvc(['run', 'cli/limits/tenant', '--set', 'tenant=initech'], env)).stdout)?.[1]);
    await until('the holder admitted', async () => (await http(s.url, 'GET', `/api/executions/${holder}`)).body.status === 'running');
    const waiting = runSvc(['run', 'cli/limits/tenant', '--set', 'tenant=initech', '--wait'], env);
    const queued = await until('the second queued', async () => {
      const list = (await http(s.url, 'GET', '/api/executions?path_prefix=cli/limits/tenant&status=queued')).body.executions;
      return list.length === 1 && list[0].execution_id;
    });
    // Seen by its watch before it goes on (the watch polls at most every second).
    await new Promise((r) => setTimeout(r, 1_500));
    expect((await runSvc(['signal', String(holder), 'go'], env)).code).toBe(0);
    await until('the second admitted', async () => (await http(s.url, 'GET', `/api/executions/${queued}`)).body.status === 'running');
    expect((await runSvc(['signal', String(queued), 'go'], env)).code).toBe(0);
    const ran = await waiting;
    expect(ran.code, ran.stderr).toBe(0);
    const shown = ran.stdout + ran.stderr;
    expect(shown).toMatch(/\] queued on limit cli-tenant key "initech": no step runs until it is admitted\n/);
    expect(shown).toMatch(/\] admitted: its steps run now\n/);
    expect(shown.indexOf('queued on limit')).toBeLessThan(shown.indexOf('admitted: its steps run now'));
    expect((await svc(['delete', 'cli-tenant'])).code).toBe(0);
  });

  it('a limit named before it is defined queues its work (shown by limits and status); defined, it runs; deleting it meanwhile is a conflict', async () => {
    // Listed as soon as a playbook names it, before any work waits on it.
    expect(lines((await svc([])).stdout)).toContainEqual(expect.stringMatching(/^cli-tenant\s+not defined\s+-\s+0\s+0\s+0\s+0$/));
    const started = await runSvc(['run', 'cli/limits/tenant', '--set', 'tenant=acme', '--priority', '8'], env);
    expect(started, started.stderr).toMatchObject({ code: 0 });
    const first = Number(/^execution (\d+) started \(cli\/limits\/tenant\)\n$/.exec(started.stdout)?.[1]);
    expect(first).toBeGreaterThan(0);
    expect((await http(s.url, 'GET', `/api/executions/${first}`)).body).toMatchObject({ status: 'queued', flow: { limit: 'cli-tenant', key: 'acme', priority: 8, admitted_at: null } });
    const status = await runSvc(['status', String(first)], env);
    expect(status.stdout).toContain('  status    queued\n');
    expect(status.stdout).toMatch(/\n {2}flow {6}queued on limit cli-tenant key "acme" \(not defined: its work waits until it is\), priority 8, since \S+ \(.+ ago\)\n/);
    expect(lines((await svc([])).stdout)).toContainEqual(expect.stringMatching(/^cli-tenant\s+not defined\s+-\s+1\s+0\s+1\s+0$/));
    // Not defined: nothing to delete.
    expect((await svc(['delete', 'cli-tenant'])).code).toBe(4);

    // Defined, the admitter admits it; its wait holds the key's one slot.
    expect((await svc(['set', 'cli-tenant', '--concurrency', '1'])).stdout).toBe('limit cli-tenant created: concurrency 1\n');
    await until('the first admitted', async () => (await http(s.url, 'GET', `/api/executions/${first}`)).body.status === 'running');
    expect((await runSvc(['status', String(first)], env)).stdout).toMatch(/\n {2}flow {6}admitted \S+ \(.+ ago\), holds a slot of limit cli-tenant key "acme"\n/);
    const second = Number(/^execution (\d+) started/.exec((await runSvc(['run', 'cli/limits/tenant', '--set', 'tenant=acme'], env)).stdout)?.[1]);
    expect((await http(s.url, 'GET', `/api/executions/${second}`)).body).toMatchObject({ status: 'queued', flow: { limit: 'cli-tenant', key: 'acme', priority: 5 } });
    expect(lines((await svc([])).stdout)).toContainEqual(expect.stringMatching(/^cli-tenant\s+1\s+-\s+1\s+1\s+1\s+0$/));
    expect((await svc(['show', 'cli-tenant'])).stdout).toMatch(/^limit cli-tenant\n {2}allows {3}concurrency 1\n[^]*\nacme\s+1\s+1\s+0\s+-\s+\S+ \(.+ ago\)\n$/);

    const busy = await svc(['delete', 'cli-tenant']);
    expect(busy).toMatchObject({ code: 5, stdout: '' });
    expect(busy.stderr).toBe('svc limits: DELETE /api/limits/cli-tenant: HTTP 409 limit cli-tenant holds, queues or has work waiting; delete it once its keys are idle\n');

    // The first goes on and ends, giving its slot to the second.
    expect((await runSvc(['signal', String(first), 'go'], env)).code).toBe(0);
    expect((await s.wait(first)).status).toBe('completed');
    await until('the second admitted', async () => (await http(s.url, 'GET', `/api/executions/${second}`)).body.status === 'running');
    expect((await runSvc(['signal', String(second), 'go'], env)).code).toBe(0);
    expect((await s.wait(second)).status).toBe('completed');
    expect((await runSvc(['status', String(second)], env)).stdout).not.toContain('  flow ');
    expect(await svc(['delete', 'cli-tenant'])).toMatchObject({ code: 0, stdout: 'limit cli-tenant deleted\n' });
  });

  it("a task's command waiting for room on its limit shows in svc status and svc limits", async () => {
    await s.register(PARTNER.replace('cli/limits/partner', 'cli/limits/held').replace('name: cli-partner', 'name: cli-held'));
    const started = await runSvc(['run', 'cli/limits/held', '--set', 'customer=initech'], env);
    const id = Number(/^execution (\d+) started/.exec(started.stdout)?.[1]);
    expect(id, started.stderr).toBeGreaterThan(0);
    await until('its command issued', async () => (await http(s.url, 'GET', `/api/executions/${id}`)).body.limit_waits?.length === 1);
    const status = await runSvc(['status', String(id)], env);
    expect(status.stdout).toContain('  status    running\n');
    expect(status.stdout).toMatch(/\nstart\s+\S+\s+room on limit cli-held key "initech" \(not defined: its work waits until it is\) since \S+ \(.+ ago\)\n$/);
    expect(lines((await svc([])).stdout)).toContainEqual(expect.stringMatching(/^cli-held\s+not defined\s+-\s+1\s+0\s+0\s+1$/));
    expect((await http(s.url, 'POST', `/api/executions/${id}/cancel`, {})).status).toBe(200);
  });

  it('svc run says when a start joined an open debounce window (the same execution)', async () => {
    const first = await runSvc(['run', 'cli/limits/debounced'], env);
    const id = Number(/^execution (\d+) started \(cli\/limits\/debounced\)\n$/.exec(first.stdout)?.[1]);
    expect(id, first.stderr).toBeGreaterThan(0);
    const second = await runSvc(['run', 'cli/limits/debounced', '--set', 'customer=c1'], env);
    expect(second).toMatchObject({ code: 0, stdout: `execution ${id} debounced (cli/limits/debounced): joined its open window; it runs with the last start's payload\n` });
    expect((await runSvc(['status', String(id)], env)).stdout).toMatch(/\n {2}flow {6}queued, priority 5, since \S+ \(.+ ago\), debounce window closes \S+ \(in .+\)\n/);
    expect((await http(s.url, 'POST', `/api/executions/${id}/cancel`, {})).status).toBe(200);
  });

  it('shows a limit whose key has queued work and has never been served', async () => {
    await s.register(TENANT.replace('cli/limits/tenant', 'cli/limits/never').replace('limit: cli-tenant', 'limit: cli-never'));
    expect((await runSvc(['run', 'cli/limits/never', '--set', 'tenant=k'], env)).code).toBe(0);
    const shown = await svc(['show', 'cli-never']);
    expect(shown, shown.stderr).toMatchObject({ code: 0, stderr: '' });
    expect(shown.stdout).toContain('  allows   not defined (its work waits until it is)\n');
    expect(shown.stdout).toMatch(/\nk\s+0\s+1\s+0\s+-\s+-\n$/);
  });

  it("lists a playbook's inline limit as @<path>, and shows it", async () => {
    // Listed with its N before anything ran on it.
    expect(lines((await svc([])).stdout)).toContainEqual(expect.stringMatching(/^@cli\/limits\/inline\s+1 \(inline\)\s+-\s+0\s+0\s+0\s+0$/));
    const id = await s.run('cli/limits/inline', {});
    expect((await s.wait(id)).status).toBe('completed');
    const row = lines((await svc([])).stdout).find((l) => l.startsWith('@cli/limits/inline'));
    expect(row).toMatch(/^@cli\/limits\/inline\s+1 \(inline\)\s+-\s+1\s+0\s+0\s+0$/);
    const shown = await svc(['show', '@cli/limits/inline']);
    expect(shown, shown.stderr).toMatchObject({ code: 0 });
    expect(shown.stdout).toMatch(/^limit @cli\/limits\/inline\n {2}allows {3}concurrency 1, inline \(its playbook sets it\)\n[^]*\n\(empty key\)\s+0\s+0\s+0\s+-\s+\S+ \(.+ ago\)\n$/);
    // Its playbook holds it: not set or deleted by name, and the refusal says so.
    for (const args of [['set', '@cli/limits/inline', '--concurrency', '2'], ['delete', '@cli/limits/inline']]) {
      const refused = await svc(args);
      expect(refused.code).toBe(2);
      expect(refused.stderr).toContain('svc limits: @cli/limits/inline is the inline limit of playbook cli/limits/inline (its concurrency: {limit: N}): its playbook holds it');
    }
  });

  it('usage errors exit 2 with the usage line; an unreachable server exits 3; --help exits 0', async () => {
    const wrong = [
      ['explode'],
      ['list', 'extra'],
      ['show'],
      ['delete', 'a', 'b'],
      ['delete', 'not a name'],
      ['set', 'x'],
      ['set', 'x', '--rate', '10'],
      ['set', 'x', '--rate', 'ten/1s'],
      ['set', 'x', '--rate', '10/1x'],
      ['set', 'x', '--rate', '10/0s'],
      ['set', 'x', '--concurrency', '0'],
      ['set', 'x', '--concurrency', '1', '--burst', '5'],
      ['set', 'x', '--rate', '10/1s', '--burst', 'five'],
      ['show', 'x', '--concurrency', '2'],
      ['show', 'x', '--keys', '0'],
      ['list', '--rate', '1/s'],
      ['list', '--nope'],
    ];
    for (const args of wrong) {
      const r = await svc(args);
      expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(2);
      expect(r.stderr, args.join(' ')).toMatch(/^svc limits: .+/);
      expect(r.stderr, args.join(' ')).toMatch(USAGE_LINE);
    }
    expect((await svc(['set', 'x', '--rate', '1/s'])).stderr).toBe('');
    // A period the API cannot hold exactly is refused, naming --rate, not rounded to another
    // (5/0.5ms was set as 5/1ms); the API refuses it alike, naming rate.period_seconds.
    for (const [rate, says] of [
      ['5/0.5ms', "--rate's PERIOD 0.5ms must be a whole number of milliseconds (0.001 s steps), from 1ms to 1d; got 0.5 ms"],
      ['5/1.5ms', "--rate's PERIOD 1.5ms must be a whole number of milliseconds"],
      ['5/0.0001s', "--rate's PERIOD 0.0001s must be a whole number of milliseconds"],
      ['5/2d', "--rate's PERIOD 2d must be at most 1d"],
    ]) {
      const r = await svc(['set', 'x', '--rate', rate]);
      expect(r.code, `${rate}: ${r.stderr}`).toBe(2);
      expect(r.stderr).toContain(`svc limits: ${says}`);
    }
    expect(JSON.parse((await svc(['set', 'x', '--rate', '7/0.007s', '--json'])).stdout).rate).toEqual({ limit: 7, period_seconds: 0.007, burst: 7 });
    const sub = await http(s.url, 'PUT', '/api/limits/x', { rate: { limit: 5, period_seconds: 0.0015 } });
    expect(sub).toMatchObject({ status: 422, body: { detail: { errors: ['rate.period_seconds: must be a whole number of milliseconds (0.001 s steps)'] } } });
    expect((await http(s.url, 'GET', '/api/limits/x')).body.rate).toEqual({ limit: 7, period_seconds: 0.007, burst: 7 });
    expect((await svc(['delete', 'x'])).code).toBe(0);
    const priority = await runSvc(['run', 'cli/limits/tenant', '--priority', '10'], env);
    expect(priority.code).toBe(2);
    expect(priority.stderr).toContain('--priority expects an integer from 0 (lowest) to 9 (highest), got "10"');
    expect((await svc([], { SVC_SERVER_URL: 'http://127.0.0.1:1' })).code).toBe(3);
    const help = await runSvc(['limits', '--help'], env);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('svc limits set NAME [--concurrency N] [--rate N/PERIOD [--burst N]]');
  });
});

describe('svc limits against SVC_AUTH=token', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ SVC_AUTH: 'token' });
  });
  afterAll(async () => t?.close());

  it('sends SVC_API_TOKEN: a viewer lists (none yet, then one) and is refused a set (exit 6), an operator sets; no token is exit 6', async () => {
    const operator = await createApiToken(t.deps.db, 'ops', 'operator');
    const viewer = await createApiToken(t.deps.db, 'look', 'viewer');
    const as = (token: string) => ({ SVC_SERVER_URL: t.url, SVC_API_TOKEN: token });
    expect((await runSvc(['limits'], { SVC_SERVER_URL: t.url })).code).toBe(6);
    expect(await runSvc(['limits'], as(viewer))).toMatchObject({ code: 0, stdout: 'no limits\n', stderr: '' });
    expect((await runSvc(['limits', 'set', 'tenant', '--concurrency', '2'], as(operator))).stdout).toBe('limit tenant created: concurrency 2\n');
    expect((await runSvc(['limits'], as(viewer))).stdout).toMatch(/\ntenant\s+2\s+-\s+0\s+0\s+0\s+0\n$/);
    const refused = await runSvc(['limits', 'set', 'tenant', '--concurrency', '3'], as(viewer));
    expect(refused.code).toBe(6);
    expect(refused.stderr).toMatch(/^svc limits: PUT \/api\/limits\/tenant: HTTP 403 .+/);
    expect((await http(t.url, 'GET', '/api/limits/tenant', undefined, bearer(viewer))).body).toMatchObject({ concurrency: 2 });
  });
});
