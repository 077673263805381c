// The simulator (`svc-orchestrator/simulate`) is the engine's own machine run without a database:
// for the same outcomes it must enter the same steps, leave each in the same status and end the
// same way as a real run. Seeded random playbooks (test/helpers/random-playbook.ts) run on a real
// server and worker, their http tasks answered per script by a real HTTP server on port 0, and
// through simulatePlaybook with the outcomes the script stands for; the calls each task made
// (its attempts under `retry`) and the children each `playbook` task started are checked too.
import { isDeepStrictEqual } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { playbookPaths, simulatePlaybook } from '../../../machines/simulate-playbook.ts';
import { isTerminalExecutionStatus } from '../../../machines/statuses.ts';
import { http, type Json } from '../../helpers/http.ts';
import { startHttpTarget, type HttpTarget } from '../../helpers/http-target.ts';
import { CHILD_YAML, HANG, SIGNAL, expectedCalls, randomPlaybook, type PlaybookPlan } from '../../helpers/random-playbook.ts';
import { startTestStack, type TestStack } from '../../helpers/stack.ts';

const SEEDS = Array.from({ length: 48 }, (_, i) => 1000 + i);
const INCLUSIVE_SEEDS = Array.from({ length: 24 }, (_, i) => 2000 + i);
/** Executions run at once. */
const BATCH = 8;

let s: TestStack;
let target: HttpTarget;
const answers = new Map<string, number[]>();
const calls = new Map<string, number>();

beforeAll(async () => {
  target = await startHttpTarget(async (req, res, rec) => {
    if (rec.path === '/ok') return void res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    const queue = answers.get(rec.path);
    if (!queue) return;
    const n = calls.get(rec.path) ?? 0;
    calls.set(rec.path, n + 1);
    // A call past its script is answered 418: the run made more attempts than the plan has.
    const status = queue[n] ?? 418;
    // Past the task's timeout_seconds: its child is cancelled first.
    if (status === HANG) await new Promise((ok) => setTimeout(ok, 6_000));
    res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify({ status }));
  });
  // Room for every execution of a batch and its children: a child waiting for a slot would run into its timeout_seconds.
  s = await startTestStack({ concurrency: 16 });
  await s.register(CHILD_YAML);
}, 60_000);
afterAll(async () => {
  await s?.close();
  await target?.close();
});

/** A step's status and how its last run ended (`completed ok`, `failed error`, `skipped`). */
type Observed = { status: string; error: string | null; path: string[]; steps: Record<string, string>; calls: Record<string, number>; children: Record<string, number> };

type View = { status: string; outcome?: { status: string } };
const statusesOf = (steps: Record<string, View>) => Object.fromEntries(Object.entries(steps).map(([k, v]) => [k, `${v.status}${v.outcome ? ` ${v.outcome.status}` : ''}`]));
/** The failing step, and the code unless it is the task's own (a run's http_status is the simulation's `simulated`). */
const errorOf = (e: { step?: string; code?: string } | null, code: string | undefined) => (e ? `${e.step ?? ''} ${e.code === code ? 'task' : (e.code ?? '')}` : null);

/** Polls the execution to its end, sending SIGNAL to each step that waits for it (as the simulation's `ok` does). */
async function signalledToEnd(id: number): Promise<Json> {
  for (const until = Date.now() + 30_000; Date.now() < until; await new Promise((ok) => setTimeout(ok, 25))) {
    const ex = (await http(s.url, 'GET', `/api/executions/${id}`)).body;
    if (isTerminalExecutionStatus(String(ex.status))) return ex;
    const state = (await http(s.url, 'GET', `/api/executions/${id}/state`)).body;
    const waiting = Object.values(state.steps as Record<string, { status: string; wait?: { signal: string | null } }>).some((v) => v.status === 'waiting' && v.wait?.signal === SIGNAL);
    if (waiting) await http(s.url, 'POST', `/api/executions/${id}/signals/${SIGNAL}`, { payload: {} });
  }
  throw new Error(`execution ${id} did not end within 30 s`);
}

async function runReal(plan: PlaybookPlan): Promise<Observed> {
  const id = await s.run(plan.path);
  const end = await signalledToEnd(id);
  const events = await s.events(id);
  const state = (await http(s.url, 'GET', `/api/executions/${id}/state`)).body;
  const children: Record<string, number> = {};
  for (const e of events.filter((e: Json) => e.event_type === 'child.started')) children[e.step] = (children[e.step] ?? 0) + 1;
  return {
    status: String(end.status),
    error: errorOf(end.error, 'http_status'),
    path: events.filter((e: Json) => e.event_type === 'step.enter').map((e: Json) => String(e.step)),
    steps: statusesOf(state.steps),
    calls: Object.fromEntries(plan.steps.flatMap((st) => st.keys.flatMap((k) => (calls.has(k) ? [[k, calls.get(k)!]] : [])))),
    children,
  };
}

function simulated(plan: PlaybookPlan): Observed {
  const sim = simulatePlaybook(plan.yaml, plan.outcomes);
  const expected = expectedCalls(plan, sim.path);
  return { status: sim.status, error: errorOf(sim.error, 'simulated'), path: sim.path, steps: statusesOf(sim.steps), calls: Object.fromEntries(expected.calls), children: Object.fromEntries(expected.children) };
}

/** Runs the plans on the server and through the simulation; each one whose two ends differ, with both. */
async function divergences(plans: PlaybookPlan[], order: (path: string[]) => string[], everyPath = false): Promise<string[]> {
  // Registration's warnings come from the same machine: a step it says no path reaches must not run.
  const unreachable = new Map<string, string[]>();
  for (const p of plans) {
    for (const [k, v] of p.answers) answers.set(k, v);
    const warnings: unknown[] = (await s.register(p.yaml)).warnings ?? [];
    unreachable.set(p.path, warnings.flatMap((w) => /^workflow\.(\S+): no path reaches step/.exec(String(w))?.[1] ?? []));
  }
  const diverged: string[] = [];
  for (let i = 0; i < plans.length; i += BATCH) {
    const batch = plans.slice(i, i + BATCH);
    const real = await Promise.all(batch.map(runReal));
    for (const [j, plan] of batch.entries()) {
      const sim = simulated(plan);
      const [a, b] = [{ ...real[j], path: order(real[j].path) }, { ...sim, path: order(sim.path) }];
      const reached = (unreachable.get(plan.path) ?? []).filter((step) => real[j].path.includes(step));
      if (reached.length) diverged.push(`${plan.path}: registration warned that no path reaches ${reached.join(', ')}, the run entered it\n${plan.yaml}`);
      // Every path (each command ok or error; a cycle here runs at most 3 rounds, never cut) holds the run's.
      const paths = everyPath ? playbookPaths(plan.yaml) : null;
      if (paths && !paths.truncated && !paths.paths.some((p) => p.status === real[j].status && isDeepStrictEqual(p.path, real[j].path))) diverged.push(`${plan.path}: no path of playbookPaths is the run's (${real[j].status}: ${real[j].path.join(' → ')})\n${plan.yaml}`);
      if (!isDeepStrictEqual(a, b)) diverged.push(`${plan.path} outcomes ${JSON.stringify(plan.outcomes)}\n${plan.yaml}\nrun: ${JSON.stringify(a)}\nsim: ${JSON.stringify(b)}`);
    }
  }
  return diverged;
}

describe('the simulator and the engine, on random playbooks', () => {
  it(`agree on ${SEEDS.length} playbooks: steps entered, their statuses, attempts and the end`, async () => {
    const diverged = await divergences(SEEDS.map((seed) => randomPlaybook(seed, target.url)), (path) => path, true);
    expect(diverged, diverged.join('\n\n')).toEqual([]);
  }, 120_000);

  it(`agree on ${INCLUSIVE_SEEDS.length} playbooks of parallel branches (inclusive arcs): the steps entered, in any order`, async () => {
    const diverged = await divergences(INCLUSIVE_SEEDS.map((seed) => randomPlaybook(seed, target.url, true)), (path) => [...path].sort());
    expect(diverged, diverged.join('\n\n')).toEqual([]);
  }, 120_000);
});
