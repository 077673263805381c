import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { MAX_SIMULATED_PATHS } from '../../../machines/paths-to-ends.ts';
import { pathDepthOf, playbookPaths, playbookWarnings, playbookFromYaml, simulatePlaybook } from '../../../machines/simulate-playbook.ts';
import { parseOutcomes, simulateCommand } from '../../../src/cli/simulate.ts';
import { Capture } from '../../helpers/capture.ts';

// Simulation runs the compiled statechart with no database and no workers: chosen outcomes per
// step give the path of steps and the end state; --paths walks every outcome with xstate/graph.

const HELLO_FILE = new URL('../../../examples/hello.yaml', import.meta.url);
const HELLO = readFileSync(HELLO_FILE, 'utf8');

const UNREACHABLE = `
apiVersion: svc/v1
kind: Playbook
metadata: { name: orphan, path: tests/orphan }
workflow:
  - step: start
    tool: { name: a, kind: shell, command: "echo a" }
    next: [{ step: done, when: "{{ outcome.status == 'ok' }}" }, { step: recover, when: "{{ outcome.status == 'error' }}" }]
  - step: done
  - step: recover
    tool: { name: r, kind: shell, command: "echo r" }
  - step: orphan
    tool: { name: o, kind: shell, command: "echo o" }
`;

const FOREVER = `
apiVersion: svc/v1
kind: Playbook
metadata: { name: forever, path: tests/forever }
workflow:
  - step: start
    tool: { name: a, kind: shell, command: "echo a" }
    next: [{ step: start, when: "{{ true }}" }]
`;

// Decisions on what only a start gives: the workload has no `go` or `regions` of its own.
const BY_INPUT = `
apiVersion: svc/v1
kind: Playbook
metadata: { name: by-input, path: tests/by-input }
workflow:
  - step: start
    next: [{ step: deploy, when: "{{ workload.go }}" }, { step: skip }]
  - step: deploy
    loop: { in: "{{ workload.regions }}", iterator: region }
    tool: { name: d, kind: shell, command: "echo {{ region }}" }
  - step: skip
`;

// What the engine renders as steps run, from what only a start gives: a limit key, a timer, a child's path.
const RENDERED_FROM_INPUT = `
apiVersion: svc/v1
kind: Playbook
metadata: { name: rendered, path: tests/rendered }
workflow:
  - step: start
    tool: { name: d, kind: shell, command: "echo d", limit: { name: per_tenant, key: "{{ workload.tenant }}" } }
    next: [{ step: later }]
  - step: later
    wait: { until: "{{ workload.run_at }}" }
    next: [{ step: child }]
  - step: child
    tool: { name: c, kind: playbook, path: "{{ workload.child_path }}" }
`;

describe('simulatePlaybook', () => {
  it('hello: all ok runs start, square, report and completes (also as the package exports it)', async () => {
    const viaPackage = (await import('svc-orchestrator/simulate')).simulatePlaybook;
    expect(viaPackage).toBe(simulatePlaybook);
    const r = simulatePlaybook(HELLO);
    expect(r).toMatchObject({ status: 'completed', path: ['start', 'square', 'report'], error: null, commands: 5 });
    expect(Object.values(r.steps).map((s) => s.status)).toEqual(['completed', 'completed', 'completed']);
  });

  it('hello: square failing stops there, report is skipped, the execution fails', () => {
    const r = simulatePlaybook(HELLO, { square: 'error' });
    expect(r.status).toBe('failed');
    expect(r.path).toEqual(['start', 'square']);
    expect(r.error).toMatchObject({ step: 'square' });
    expect(r.steps.report.status).toBe('skipped');
  });

  it('outcomes in turn: the second loop item fails', () => {
    const r = simulatePlaybook(HELLO, { square: ['ok', 'error', 'ok'] });
    expect(r.status).toBe('failed');
    expect(r.error?.message).toContain('item 1');
  });

  it('the payload reaches the machine (loop over a payload list)', () => {
    expect(simulatePlaybook(HELLO, {}, { payload: { numbers: [1, 2, 3, 4, 5, 6] } }).commands).toBe(8);
  });

  it('a recovery arc: start failing runs recover and completes', () => {
    expect(simulatePlaybook(UNREACHABLE, { start: 'error' })).toMatchObject({ status: 'completed', path: ['start', 'recover'] });
  });
});

describe('paths and registration warnings', () => {
  it('hello: every path ends completed or failed and every step is reachable', () => {
    const report = playbookPaths(HELLO);
    expect(report.truncated).toBe(false);
    expect(report.unreachable).toEqual([]);
    expect(new Set(report.paths.map((p) => p.status))).toEqual(new Set(['completed', 'failed']));
    expect(report.paths.some((p) => p.path.join(' ') === 'start square report' && p.status === 'completed')).toBe(true);
    expect(playbookWarnings(playbookFromYaml(HELLO))).toEqual([]);
  });

  it('names a step no path reaches', () => {
    expect(playbookPaths(UNREACHABLE).unreachable).toEqual(['orphan']);
    expect(playbookWarnings(playbookFromYaml(UNREACHABLE))).toEqual([expect.stringContaining('no path reaches step orphan')]);
  });

  it('a cycle without exit: paths cut at the stated depth, and a warning', () => {
    const report = playbookPaths(FOREVER);
    expect(report.truncated).toBe(false);
    expect(report.paths.length).toBeGreaterThan(0);
    expect(report.paths.every((p) => p.cut && p.status === 'running' && p.path.length === pathDepthOf(playbookFromYaml(FOREVER)))).toBe(true);
    expect(playbookWarnings(playbookFromYaml(FOREVER))).toEqual([expect.stringContaining('end neither completed nor failed')]);
  });
});

describe('decisions on the workload a start gives', () => {
  it("are not the simulation's to make: depends_on_data naming the workload values, decided once the payload has them", () => {
    expect(simulatePlaybook(BY_INPUT)).toMatchObject({ status: 'depends_on_data', path: ['start'], undecided: { step: 'start', at: 'next', needs: [], workload: ['go'] } });
    expect(simulatePlaybook(BY_INPUT, {}, { payload: { go: true } })).toMatchObject({ status: 'depends_on_data', path: ['start', 'deploy'], undecided: { step: 'deploy', at: 'loop.in', workload: ['regions'] } });
    expect(simulatePlaybook(BY_INPUT, {}, { payload: { go: true, regions: ['eu', 'us'] } })).toMatchObject({ status: 'completed', path: ['start', 'deploy'], commands: 2 });
    expect(simulatePlaybook(BY_INPUT, {}, { payload: { go: false } })).toMatchObject({ status: 'completed', path: ['start', 'skip'] });
  });

  it("registration warns of no step: none is unreachable, each depends on the start's data", () => {
    const report = playbookPaths(BY_INPUT, { useExamples: false });
    expect(report.unreachable).toEqual([]);
    expect(report.depends_on_data).toEqual(['deploy', 'skip']);
    expect(report.paths).toEqual([expect.objectContaining({ status: 'depends_on_data', path: ['start'] })]);
    expect(playbookWarnings(playbookFromYaml(BY_INPUT))).toEqual([]);
  });

  it('nor are the limit keys, timers and children the engine renders from it', () => {
    expect(simulatePlaybook(RENDERED_FROM_INPUT)).toMatchObject({ status: 'depends_on_data', path: ['start'], undecided: { step: 'start', at: 'enter', needs: [], workload: ['tenant'] } });
    expect(simulatePlaybook(RENDERED_FROM_INPUT, {}, { payload: { tenant: 'a' } })).toMatchObject({ status: 'depends_on_data', path: ['start', 'later'], undecided: { step: 'later', at: 'enter', workload: ['run_at'] } });
    expect(simulatePlaybook(RENDERED_FROM_INPUT, {}, { payload: { tenant: 'a', run_at: '2026-01-01T00:00:00Z' } })).toMatchObject({ status: 'depends_on_data', undecided: { step: 'child', workload: ['child_path'] } });
    expect(simulatePlaybook(RENDERED_FROM_INPUT, {}, { payload: { tenant: 'a', run_at: '2026-01-01T00:00:00Z', child_path: 'x/y' } })).toMatchObject({ status: 'completed', path: ['start', 'later', 'child'] });
    expect(playbookWarnings(playbookFromYaml(RENDERED_FROM_INPUT))).toEqual([]);
  });

  it('svc simulate says which workload value it lacks', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-sim-input-'));
    try {
      const file = join(dir, 'by-input.yaml');
      writeFileSync(file, BY_INPUT);
      const out = new Capture();
      expect(await simulateCommand([file], out, new Capture())).toBe(0);
      expect(out.text).toContain('status: depends_on_data (the next step after start depends on data: no value of workload.go (a start gives it))');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('svc simulate', () => {
  it('prints the path and the end state', async () => {
    const out = new Capture();
    expect(await simulateCommand([HELLO_FILE.pathname, '--outcome', 'square=error'], out, new Capture())).toBe(0);
    expect(out.text).toContain('path:   start → square\n');
    expect(out.text).toContain('status: failed (square:');
  });

  it('--paths lists each path with its end state', async () => {
    const out = new Capture();
    expect(await simulateCommand([HELLO_FILE.pathname, '--paths'], out, new Capture())).toBe(0);
    expect(out.text).toMatch(/^completed\s+start → square → report/m);
    expect(out.text).toMatch(/^failed\s+start\s/m);
  });

  it('--paths names the step no path reaches', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-simulate-'));
    try {
      const file = join(dir, 'orphan.yaml');
      writeFileSync(file, UNREACHABLE);
      const out = new Capture();
      expect(await simulateCommand([file, '--paths'], out, new Capture())).toBe(0);
      expect(out.text).toContain('unreachable steps: orphan\n');
      expect(out.text).toMatch(/^completed\s+start → recover\s/m);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('an invalid playbook: its problems at file:line:col, with --json as JSON on stdout (exit 1)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-simulate-'));
    try {
      const file = join(dir, 'bad.yaml');
      writeFileSync(file, UNREACHABLE.replace('command: "echo a"', 'comand: "echo a"'));
      const errOut = new Capture();
      expect(await simulateCommand([file], new Capture(), errOut)).toBe(1);
      expect(errOut.text).toContain(`${file}:7:35: workflow[0].tool.comand: unknown field 'comand' (did you mean 'command'?)\n`);
      const out = new Capture();
      expect(await simulateCommand([file, '--json'], out, new Capture())).toBe(1);
      expect(JSON.parse(out.text)).toMatchObject({ file, error: 'invalid playbook' });
      expect(JSON.parse(out.text).problems).toContainEqual({ path: 'workflow[0].tool.comand', message: "unknown field 'comand' (did you mean 'command'?)", line: 7, column: 35 });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses bad outcomes and unknown steps (exit 2)', async () => {
    expect(parseOutcomes(['square=maybe'])).toContain('--outcome expects');
    const errOut = new Capture();
    expect(await simulateCommand([HELLO_FILE.pathname, '--outcome', 'nosuch=ok'], new Capture(), errOut)).toBe(2);
    expect(errOut.text).toContain('nosuch');
  });
});

describe('simulatePlaybook: pauseWhenUndecided (the GUI decides step by step)', () => {
  it('stops at the first step with no outcome left, lists it as waiting, and goes on as outcomes come', () => {
    const first = simulatePlaybook(UNREACHABLE, {}, { pauseWhenUndecided: true });
    expect(first.waiting).toEqual(['start']);
    expect(first.steps.start.status).toBe('active');
    expect(first.commands).toBe(0);
    const failed = simulatePlaybook(UNREACHABLE, { start: ['error'] }, { pauseWhenUndecided: true });
    expect(failed.waiting).toEqual(['recover']);
    expect(failed.path).toEqual(['start', 'recover']);
    const ended = simulatePlaybook(UNREACHABLE, { start: ['error'], recover: ['ok'] }, { pauseWhenUndecided: true });
    expect(ended.waiting).toEqual([]);
    expect(ended.status).toBe(simulatePlaybook(UNREACHABLE, { start: 'error' }).status);
    // Without the option nothing changes: undecided steps are ok and there is no `waiting`.
    expect(simulatePlaybook(UNREACHABLE).waiting).toBeUndefined();
  });
});

describe('depends on data', () => {
  const STATUS_ONLY = `
apiVersion: svc/v1
kind: Playbook
metadata: { name: st, path: tests/st }
workflow:
  - step: start
    tool: { name: a, kind: shell, command: "echo a" }
    next: [{ step: good, when: "{{ steps.start.status == 'ok' and outcome.status == 'ok' }}" }, { step: bad }]
  - step: good
  - step: bad
`;
  it('a when on status alone needs no example', () => {
    expect(simulatePlaybook(STATUS_ONLY)).toMatchObject({ status: 'completed', path: ['start', 'good'] });
  });

  // A step's example is its last task's data: an arc reading an earlier task's data is not decided
  // on a null the simulation made up (it reported a template error a real run never has).
  const EARLIER_TASK = `
apiVersion: svc/v1
kind: Playbook
metadata: { name: et, path: tests/et }
workflow:
  - step: start
    tool:
      - { name: count, kind: shell, command: "echo 5" }
      - { name: check, kind: shell, command: "echo up" }
    next:
      - { step: big, when: "{{ outcome.tasks.count.data.stdout | trim | int > 3 and steps.start.tasks.check.status == 'ok' }}" }
      - { step: small }
  - step: big
  - step: small
examples:
  start: { exit_code: 0, stdout: "up\\n", stderr: "" }
`;
  it('--paths with example results: a step those results keep off every path depends on data, it is not unreachable', async () => {
    const probe = EARLIER_TASK.replace('outcome.tasks.count.data.stdout', 'outcome.tasks.check.data.stdout');
    const report = playbookPaths(probe);
    expect(report.paths.some((p) => p.path.includes('big'))).toBe(false);
    expect(report).toMatchObject({ unreachable: [], depends_on_data: ['big'] });
    // What no result can reach stays unreachable.
    expect(playbookPaths(UNREACHABLE, { results: { start: {} } })).toMatchObject({ unreachable: ['orphan'], depends_on_data: [] });
    const dir = mkdtempSync(join(tmpdir(), 'svc-simulate-'));
    try {
      const file = join(dir, 'probe.yaml');
      writeFileSync(file, probe);
      const out = new Capture();
      expect(await simulateCommand([file, '--paths'], out, new Capture())).toBe(0);
      expect(out.text).toContain('not reached with these example results (others may reach them): big\n');
      expect(out.text).not.toContain('unreachable');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("an arc reading a task's data other than the last task's depends on data, even with the step's example", () => {
    expect(simulatePlaybook(EARLIER_TASK)).toMatchObject({ status: 'depends_on_data', error: null, undecided: { step: 'start', at: 'next', needs: ['start.tasks.count'] } });
    // The last task's data is the example's: reading it decides.
    const last = EARLIER_TASK.replace('outcome.tasks.count.data.stdout', 'outcome.tasks.check.data.stdout');
    expect(simulatePlaybook(last)).toMatchObject({ status: 'completed', path: ['start', 'small'] });
  });

  // DESIGN.md's approval step: a signal's payload decides, unless no signal came.
  const APPROVAL = `
apiVersion: svc/v1
kind: Playbook
metadata: { name: approval, path: tests/approval }
workflow:
  - step: start
    next: approve
  - step: approve
    wait: { signal: approval, timeout: 24h }
    next:
      - { step: deploy, when: "{{ outcome.status == 'ok' and signal.payload.approved }}" }
      - { step: rejected, when: "{{ outcome.status == 'timeout' or not signal.payload.approved }}" }
  - step: deploy
  - step: rejected
`;
  it('a wait that timed out has no result to know: its arcs are decided without an example; a signal\'s payload is not', () => {
    expect(simulatePlaybook(APPROVAL, { approve: 'timeout' })).toMatchObject({ status: 'completed', path: ['start', 'approve', 'rejected'] });
    expect(simulatePlaybook(APPROVAL, { approve: 'ok' })).toMatchObject({ status: 'depends_on_data', undecided: { step: 'approve', needs: ['approve'] } });
    expect(simulatePlaybook(APPROVAL, { approve: 'ok' }, { results: { approve: { approved: true } } })).toMatchObject({ status: 'completed', path: ['start', 'approve', 'deploy'] });
    const paths = playbookPaths(APPROVAL).paths.map((p) => ({ status: p.status, outcomes: p.outcomes.map((o) => `${o.step}=${o.outcome}`) }));
    expect(paths).toContainEqual({ status: 'completed', outcomes: ['approve=timeout'] });
    expect(paths).toContainEqual({ status: 'depends_on_data', outcomes: ['approve=ok'] });
  });

  it('a timer step has no result to know either', () => {
    const timer = `
apiVersion: svc/v1
kind: Playbook
metadata: { name: pause, path: tests/pause }
workflow:
  - step: start
    wait: { for: 5m }
    next: [{ step: quiet, when: "{{ outcome.result is none }}" }, { step: loud }]
  - step: quiet
  - step: loud
`;
    expect(simulatePlaybook(timer)).toMatchObject({ status: 'completed', path: ['start', 'quiet'] });
  });

  it('svc simulate --result gives a step its result; without it the status is depends_on_data', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sim-'));
    const file = join(dir, 'p.yaml');
    writeFileSync(file, UNREACHABLE.replace(`"{{ outcome.status == 'ok' }}"`, `"{{ steps.start.result.n > 1 }}"`));
    try {
      const blind = new Capture();
      expect(await simulateCommand([file], blind, new Capture())).toBe(0);
      expect(blind.text).toContain('status: depends_on_data (the next step after start depends on data: no example result of start)');
      const given = new Capture();
      expect(await simulateCommand([file, '--result', 'start={"n": 2}'], given, new Capture())).toBe(0);
      expect(given.text).toContain('path:   start → done');
      const bad = new Capture();
      expect(await simulateCommand([file, '--result', 'nope={}'], new Capture(), bad)).toBe(2);
      expect(bad.text).toContain('--result names no step');
    } finally {
      rmSync(dir, { recursive: true });
    }
  });
});

describe('paths of a playbook whose outcomes multiply', () => {
  // A parallel loop of n items had 2^n paths (each item ok or error), now n + 1 (the first failure
  // at each item, or none; the items still running then end ok). Registration checks them on the
  // server's thread: enumerated whole, 12 items took 12 s and 80 held a server for minutes. The
  // report stops at its budgets, truncated, and registration says so.
  it('stops at its budgets: a parallel loop over 80 items is checked within seconds, truncated, with a warning', () => {
    const pb = playbookFromYaml(`apiVersion: svc/v1
kind: Playbook
metadata: { name: wide, path: t/wide }
workflow:
  - step: start
    loop: { in: "{{ range(80) }}", mode: parallel }
    tool: { name: t, kind: noop }
    next: end
  - step: end
    tool: { name: e, kind: noop }
`);
    // The thread's CPU, not the wall clock: the budgets count states, and a loaded machine (CI
    // beside other runs) took 16 s of wall time for the ~2 s of work.
    const t0 = process.threadCpuUsage();
    const report = playbookPaths(pb, { useExamples: false });
    expect(report.truncated).toBe(true);
    expect(report.paths.length).toBeGreaterThan(0);
    expect(report.paths.length).toBeLessThanOrEqual(MAX_SIMULATED_PATHS);
    expect(playbookWarnings(pb)).toEqual([expect.stringMatching(/^workflow: too many paths to check them all .*paths were not all checked$/)]);
    const spent = process.threadCpuUsage(t0);
    expect((spent.user + spent.system) / 1000).toBeLessThan(15_000);
  }, 60_000);

  it('still follows every path of a small one: a parallel loop over 4 items has 5 (its first failure at each item, or none)', () => {
    const report = playbookPaths(
      playbookFromYaml(`apiVersion: svc/v1
kind: Playbook
metadata: { name: four, path: t/four }
workflow:
  - step: start
    loop: { in: "{{ range(4) }}", mode: parallel }
    tool: { name: t, kind: noop }
`),
      { useExamples: false },
    );
    expect(report).toMatchObject({ truncated: false });
    expect(report.paths).toHaveLength(5);
  });
});
