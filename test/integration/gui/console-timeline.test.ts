// The execution's timeline in a real browser against a real server, worker and PostgreSQL: the
// Gantt of a five-step playbook (a loop held by a gate file until the test opens it, a shell task
// failing until its third attempt, a child playbook) has bars whose durations are the events'
// (within 50 ms); a failed attempt's output is read from its bar; the child's bar opens the child,
// which links back; the statechart's loop node counts its items while they run. Screenshot for
// docs/gui.md (SVC_UPDATE_SCREENSHOTS=1). No console errors.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser } from '../../helpers/browser.ts';
import { ensureGuiBuilt, screenshotPath } from '../../helpers/gui-build.ts';
import { http, type Json } from '../../helpers/http.ts';
import { startTestStack, UNSANDBOXED_SHELL, type TestStack } from '../../helpers/stack.ts';
import { until } from '../../helpers/until.ts';
import { buildTimeline } from '../../../gui/src/timeline/model.ts';

const TOLERANCE_MS = 50;
const dir = mkdtempSync(join(tmpdir(), 'timeline-'));

const CHILD = `apiVersion: svc/v1
kind: Playbook
metadata: { name: tlchild, path: timeline/child }
workflow:
  - step: start
    tool: { name: nap, kind: shell, command: "sleep 0.3; echo child done" }
`;
// items waits for the test's gate file; flaky fails (exit 3, "not yet N" on stderr) until its third attempt.
const PARENT = `apiVersion: svc/v1
kind: Playbook
metadata: { name: tlparent, path: timeline/parent }
workload: { items: [1, 2, 3], dir: "${dir}" }
workflow:
  - step: start
    tool: { name: hello, kind: shell, command: "sleep 0.2; echo hello" }
    next: items
  - step: items
    loop: { in: "{{ workload.items }}", iterator: n, mode: parallel, max_in_flight: 2 }
    tool:
      name: square
      kind: shell
      command: "until [ -f {{ workload.dir }}/go-{{ execution.id }} ]; do sleep 0.05; done; sleep 0.{{ n }}; echo $(( {{ n }} * {{ n }} ))"
    next: flaky
  - step: flaky
    tool:
      name: flaky
      kind: shell
      command: 'f={{ workload.dir }}/count-{{ execution.id }}; n=$(cat $f 2>/dev/null || echo 0); n=$((n+1)); echo $n > $f; sleep 0.1; echo "try $n"; if [ $n -lt 3 ]; then echo "not yet $n" >&2; exit 3; fi'
      retry: { attempts: 4, delay_seconds: 0.2 }
    next: sub
  - step: sub
    tool: { name: child, kind: playbook, path: timeline/child }
    next: report
  - step: report
    tool: { name: sum, kind: shell, command: "echo done" }
`;

let stack: TestStack;
let browser: Browser;
let page: Page;
const consoleErrors: string[] = [];
let parentId: number;
let childId: number;

beforeAll(async () => {
  ensureGuiBuilt();
  stack = await startTestStack({ workers: 1, concurrency: 4, workerOptions: { shell: UNSANDBOXED_SHELL } });
  browser = await launchBrowser();
  page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  page.on('console', (m) => {
    if (m.type() === 'error' && !/Failed to load resource: the server responded with a status of (400|404)/.test(m.text())) consoleErrors.push(m.text());
  });
  page.on('pageerror', (e) => consoleErrors.push(`pageerror: ${e.message}`));
  page.on('request', (r) => {
    if (!r.url().startsWith(stack.url) && !r.url().startsWith('data:')) consoleErrors.push(`foreign request: ${r.url()}`);
  });
  await stack.register(CHILD);
  await stack.register(PARENT);
});

afterAll(async () => {
  await browser?.close();
  await stack?.close();
});

type BarAttrs = { kind: string; step: string; status: string; start: string; end: string | null; durationMs: number; seq?: number; loopIndex?: number; task?: string; attempt?: number; child?: number; label: string; widthPx: number; trackPx: number };

/** Every bar of the Gantt with its attributes, duration label and drawn width. */
const readBars = (p: Page): Promise<BarAttrs[]> =>
  p.$$eval('.gantt [data-bar]', (nodes) =>
    nodes.map((n) => {
      const num = (name: string) => (n.hasAttribute(name) ? Number(n.getAttribute(name)) : undefined);
      const row = n.closest('.gantt-row')!;
      return {
        kind: n.getAttribute('data-kind')!,
        step: n.getAttribute('data-step')!,
        status: n.getAttribute('data-status')!,
        start: n.getAttribute('data-start')!,
        end: n.getAttribute('data-end'),
        durationMs: Number(n.getAttribute('data-duration-ms')),
        seq: num('data-seq'),
        loopIndex: num('data-loop-index'),
        task: n.getAttribute('data-task') ?? undefined,
        attempt: num('data-attempt'),
        child: num('data-child'),
        label: row.querySelector('.gantt-dur')!.textContent!,
        widthPx: n.getBoundingClientRect().width,
        trackPx: row.querySelector('.gantt-track')!.getBoundingClientRect().width,
      };
    }),
  );

const t = (iso: string) => Date.parse(iso);
/** "109 ms", "1.2 s" back to milliseconds, with the half unit the label rounds to. */
function parseLabel(label: string): { ms: number; slack: number } {
  const m = /([\d.]+) (ms|s)$/.exec(label.trim());
  if (!m) throw new Error(`duration label: ${label}`);
  return m[2] === 'ms' ? { ms: Number(m[1]), slack: 1 } : { ms: Number(m[1]) * 1000, slack: 50 };
}

describe('the timeline of an execution', () => {
  it('counts the loop’s items on its statechart node while they run, then draws the Gantt of the whole run', async () => {
    parentId = await stack.run('timeline/parent');
    await page.goto(`${stack.url}/ui/#/executions/${parentId}`);
    const items = page.locator('svg.graph [data-step="items"]');
    // Two items in flight (max_in_flight 2), none done, three in all: held there by the gate.
    await until('the loop node counts two in flight', async () => (await items.getAttribute('data-loop-in-flight')) === '2', 20_000, 50);
    expect(await items.getAttribute('data-loop-done')).toBe('0');
    expect(await items.getAttribute('data-loop-length')).toBe('3');
    expect(await items.locator('.node-progress').textContent()).toBe('0/3 done · 2 in flight');
    // The Gantt shows them running (no end yet).
    await until('two running items in the Gantt', async () => (await readBars(page)).filter((b) => b.kind === 'command' && b.step === 'items' && b.status === 'running').length === 2, 10_000, 50);
    writeFileSync(join(dir, `go-${parentId}`), '');
    expect((await stack.wait(parentId, 30_000)).status).toBe('completed');
    await page.locator('.facts .badge', { hasText: 'completed' }).waitFor();
    expect(await items.locator('.node-progress').textContent()).toBe('3/3 done');
  });

  it('has a bar per step, loop item, attempt and child whose duration is the events’ within 50 ms', async () => {
    const events = await stack.events(parentId);
    const of = (type: string) => events.filter((e) => e.event_type === type);
    const children = (await http(stack.url, 'GET', `/api/executions?parent=${parentId}`)).body.executions as Json[];
    expect(children).toHaveLength(1);
    childId = children[0].execution_id;
    const child = children[0];
    const flakyRoute = (await http(stack.url, 'GET', `/api/executions/${parentId}/steps/flaky`)).body;

    await until('every bar ended', async () => {
      const bars = await readBars(page);
      return bars.length > 0 && bars.every((b) => b.end !== null);
    });
    const bars = await readBars(page);
    const span = Number(await page.locator('.gantt').getAttribute('data-span-ms'));
    const checked: string[] = [];
    const expectBar = (bar: BarAttrs | undefined, name: string, start: number, durationMs: number) => {
      expect(bar, name).toBeDefined();
      expect(Math.abs(bar!.durationMs - durationMs), `${name}: ${bar!.durationMs} ms drawn, ${durationMs} ms in the events`).toBeLessThanOrEqual(TOLERANCE_MS);
      expect(Math.abs(t(bar!.start) - start), `${name} starts at ${bar!.start}, events say ${new Date(start).toISOString()}`).toBeLessThanOrEqual(TOLERANCE_MS);
      const label = parseLabel(bar!.label);
      expect(Math.abs(label.ms - durationMs), `${name}: label ${bar!.label}`).toBeLessThanOrEqual(TOLERANCE_MS + label.slack);
      // Drawn to scale: its width is its share of the axis (a bar is at least 3 px wide).
      expect(Math.abs(bar!.widthPx - Math.max(3, (durationMs / span) * bar!.trackPx)), `${name}: ${bar!.widthPx} px`).toBeLessThanOrEqual(3 + (TOLERANCE_MS / span) * bar!.trackPx);
      checked.push(name);
    };

    // Steps: from step.enter to step.exit, as the server stored them.
    for (const step of ['start', 'items', 'flaky', 'sub', 'report']) {
      const enter = of('step.enter').find((e) => e.step === step)!;
      const exit = of('step.exit').find((e) => e.step === step)!;
      expectBar(bars.find((b) => b.kind === 'step' && b.step === step), `step ${step}`, t(enter.created_at), t(exit.created_at) - t(enter.created_at));
    }
    // Loop items: each item's command, from the worker's start to its end.
    for (const index of [0, 1, 2]) {
      const seq = of('command.issued').find((e) => e.step === 'items' && e.context.loop_index === index)!.context.seq;
      const started = of('command.started').find((e) => e.context.seq === seq)!;
      const completed = of('command.completed').find((e) => e.context.seq === seq)!;
      expect(started.context.at, 'the worker reports its true start').toBeTypeOf('string');
      expectBar(bars.find((b) => b.kind === 'command' && b.loopIndex === index), `item ${index}`, t(started.context.at), t(completed.context.at) - t(started.context.at));
    }
    // The retried task: the whole task, each failed attempt (call.attempt) and the last one (the step route).
    const done = of('call.done').find((e) => e.step === 'flaky')!;
    expect(done.context.attempts).toBe(3);
    expectBar(bars.find((b) => b.kind === 'task' && b.task === 'flaky'), 'task flaky', t(done.context.at), done.context.duration_ms);
    const failed = of('call.attempt').filter((e) => e.step === 'flaky');
    expect(failed.map((e) => e.context.attempt)).toEqual([1, 2]);
    for (const a of failed) expectBar(bars.find((b) => b.kind === 'attempt' && b.attempt === a.context.attempt), `attempt ${a.context.attempt}`, t(a.context.at), a.context.duration_ms);
    const last = flakyRoute.runs[0].tasks[0].attempts[2];
    expect(last).toMatchObject({ attempt: 3, status: 'ok' });
    expectBar(bars.find((b) => b.kind === 'attempt' && b.attempt === 3), 'attempt 3', t(last.started_at), last.duration_ms);
    expect(bars.filter((b) => b.kind === 'attempt').map((b) => b.status)).toEqual(['error', 'error', 'ok']);
    // The child: from child.started to child.finished in the parent's log, about as long as the child ran.
    const childStarted = of('child.started')[0];
    const childFinished = of('child.finished')[0];
    expect(childStarted.context.child_execution_id).toBe(childId);
    expectBar(bars.find((b) => b.kind === 'child'), 'child', t(childStarted.created_at), t(childFinished.created_at) - t(childStarted.created_at));
    expect(Math.abs(t(childFinished.created_at) - t(child.finished_at))).toBeLessThan(1_000);
    expect(bars.find((b) => b.kind === 'child')!.child).toBe(childId);
    expect(checked).toHaveLength(5 + 3 + 1 + 3 + 1);
    // Nothing was estimated from storage times: the worker's report gave every time.
    expect(await page.locator('.gantt [data-approx]').count()).toBe(0);
  });

  it('shows a failed attempt’s output, error and events from its bar', async () => {
    await page.locator('.gantt [data-kind="attempt"][data-attempt="1"]').click();
    const details = page.getByRole('region', { name: 'Details of Task flaky, attempt 1 (step flaky)' });
    await details.waitFor();
    await details.getByLabel('stderr').waitFor();
    expect(await details.getByLabel('stderr').textContent()).toBe('not yet 1\n');
    expect(await details.getByLabel('stdout').textContent()).toBe('try 1\n');
    expect(await details.locator('.exit-code').textContent()).toBe('3');
    expect(await details.locator('.error-text').textContent()).toContain('command exited with code 3');
    expect(await details.locator('.badge').first().textContent()).toBe('error');
    await details.locator('.bar-events > summary').click();
    expect(await details.locator('.bar-events li .ev-head strong').allTextContents()).toEqual(['call.attempt']);
    await page.screenshot({ path: screenshotPath('timeline-gantt'), fullPage: true });

    // The task's bar holds every attempt, the last one ok.
    await page.locator('.gantt [data-kind="task"][data-task="flaky"]').click();
    const task = page.getByRole('region', { name: 'Details of Task flaky of step flaky' });
    await task.waitFor();
    await until('three attempts listed', async () => (await task.locator('.attempts > li').count()) === 3);
    expect(await task.locator('.attempts pre.stderr').allTextContents()).toEqual(['not yet 1\n', 'not yet 2\n']);
    expect(await task.locator('.attempts pre.stdout').allTextContents()).toEqual(['try 1\n', 'try 2\n', 'try 3\n']);
  });

  it('keeps the raw events one click away, and a statechart step narrows them', async () => {
    await page.getByRole('button', { name: /^Events \(\d+\)$/ }).click();
    const all = (await stack.events(parentId)).length;
    expect(await page.locator('.timeline > li').count()).toBe(all);
    await page.getByRole('button', { name: 'Gantt' }).click();
    await page.locator('.gantt').waitFor();
    // A step chosen on the statechart: its events, then its bars only.
    await page.locator('svg.graph [data-step="flaky"]').click();
    await page.getByRole('heading', { name: 'Timeline of flaky' }).waitFor();
    expect(new Set(await page.locator('.timeline .ev-step').allTextContents())).toEqual(new Set(['flaky']));
    await page.getByRole('button', { name: 'Gantt' }).click();
    expect(new Set((await readBars(page)).map((b) => b.step))).toEqual(new Set(['flaky']));
    await page.getByRole('button', { name: 'Show all events' }).click();
    // The step of a playbook task: its events include its child's end, stored without a step.
    await page.locator('svg.graph [data-step="sub"]').click();
    await page.getByRole('heading', { name: 'Timeline of sub' }).waitFor();
    await page.locator('.timeline .ev-child-finished').waitFor();
    expect(await page.locator('.timeline .ev-child-started').count()).toBe(1);
    await page.getByRole('button', { name: 'Show all events' }).click();
  });

  it('opens the child from its bar, and the child links back to its parent', async () => {
    await page.getByRole('heading', { name: 'Timeline', exact: true }).waitFor();
    await page.getByRole('button', { name: 'Gantt' }).click();
    await page.locator('.gantt .kind-child a', { hasText: `execution ${childId}` }).click();
    await page.waitForURL(new RegExp(`#/executions/${childId}$`));
    await page.getByRole('heading', { name: `Execution ${childId}` }).waitFor();
    const back = page.locator('.lineage a', { hasText: `execution ${parentId}` });
    await back.waitFor();
    // The child's own Gantt: its one step.
    await until('the child’s Gantt', async () => (await readBars(page)).some((b) => b.kind === 'step' && b.step === 'start' && b.end !== null));
    await back.click();
    await page.waitForURL(new RegExp(`#/executions/${parentId}$`));
    await page.locator('.lineage a', { hasText: `execution ${childId}` }).waitFor();
    // The child's bar's details link to it too.
    await page.locator('.gantt [data-kind="child"]').click();
    await page.locator('.bar-details a', { hasText: `execution ${childId}` }).waitFor();
  });

  it('draws an old execution (events without context.at) from when its events were stored, marked as such', async () => {
    const events = await stack.events(parentId);
    const old = events.map((e) => (e.context && typeof e.context === 'object' ? { ...e, context: Object.fromEntries(Object.entries(e.context).filter(([k]) => k !== 'at' && k !== 'received_at' && k !== 'attempt_ms')) } : e));
    const execution = (await http(stack.url, 'GET', `/api/executions/${parentId}`)).body;
    const { bars } = buildTimeline(old, execution);
    const stored = (type: string, seq: number) => Date.parse(old.find((e) => e.event_type === type && e.context?.seq === seq).created_at);
    for (const index of [0, 1, 2]) {
      const seq = old.find((e) => e.event_type === 'command.issued' && e.context.loop_index === index).context.seq;
      const claimed = Date.parse(old.find((e) => e.event_type === 'command.claimed' && e.context.seq === seq).context.claimed_at);
      const item = bars.find((b) => b.kind === 'command' && b.loopIndex === index)!;
      // From the claim (a server time) to when the completion was stored.
      expect(item).toMatchObject({ approx: true, status: 'ok', start: claimed, end: stored('command.completed', seq) });
    }
    // Steps were always stored times: exact.
    expect(bars.filter((b) => b.kind === 'step').every((b) => !b.approx && b.end !== null)).toBe(true);
    // Attempts keep their lengths (duration_ms), laid one after another from the command's start.
    const attempts = bars.filter((b) => b.kind === 'attempt');
    expect(attempts.map((b) => b.status)).toEqual(['error', 'error', 'ok']);
    expect(attempts.slice(0, 2).map((b) => b.end! - b.start)).toEqual(old.filter((e) => e.event_type === 'call.attempt').map((e) => e.context.duration_ms));
    expect(attempts.every((b) => b.approx)).toBe(true);
  });

  it('logged no console errors', () => {
    expect(consoleErrors).toEqual([]);
  });
});
