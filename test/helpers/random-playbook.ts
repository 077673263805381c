// Small random-but-valid playbooks for the simulator's differential test: a seeded plan of steps
// (http tasks with retries, loops, `playbook` tasks with a server-held retry, timers, signal waits
// that time out, steps without tools) whose arcs only go forward, so every step is entered at
// most once and the order of a run's calls is fixed. Each plan holds, per HTTP key, the statuses
// its target answers in turn, and the outcomes the simulation is given for the same run.
import type { SimulatedOutcomes } from '../../machines/simulate-playbook.ts';

/** mulberry32: a small seeded PRNG, the same sequence for the same seed on every machine. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

type Kind = 'http' | 'loop' | 'badloop' | 'child' | 'timer' | 'signal' | 'approve' | 'empty';
type Outcome = 'ok' | 'error' | 'timeout';

/** One command's (or loop item's) calls: the statuses answered in turn, and how the command ends. */
type Script = { statuses: number[]; outcome: Outcome };

export type StepPlan = {
  name: string;
  kind: Kind;
  /** The HTTP keys its task calls: one per item of a parallel loop, else one for all its commands. */
  keys: string[];
  /** Per key, the scripts of the commands (a `playbook` task's: of its runs, each attempt a child) it serves in turn. */
  scripts: Script[][];
  /** Items of its loop (1 without one). */
  items: number;
  parallel: boolean;
};

export type PlaybookPlan = {
  path: string;
  yaml: string;
  steps: StepPlan[];
  /** What the simulation is given: each step's commands' (a `playbook` task's attempts') outcomes in turn. */
  outcomes: SimulatedOutcomes;
  /** Statuses the target answers per key, in turn. */
  answers: Map<string, number[]>;
};

/** Back arcs taken at most this often in a run (a counter in `vars.round`): a step is entered at most once more each time. */
export const MAX_ROUNDS = 2;

/** The child every `playbook` task starts: one GET of the URL its args give. */
export const CHILD_PATH = 'diff/child';
export const CHILD_YAML = `apiVersion: svc/v1
kind: Playbook
metadata: { name: diff_child, path: ${CHILD_PATH} }
workload: { url: "http://127.0.0.1:9/none" }
workflow:
  - step: start
    tool: { name: call, kind: http, url: "{{ workload.url }}" }
`;

const pick = <T>(r: () => number, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)];
const int = (r: () => number, lo: number, hi: number) => lo + Math.floor(r() * (hi - lo + 1));

/** The signal an `approve` step waits for, sent by the test as soon as the step waits. */
export const SIGNAL = 'go';

/** A status the target answers by hanging (6 s, then 200): past a `playbook` task's `timeout_seconds`. */
export const HANG = 0;

/**
 * The calls of one command under `attempts` tries: each fails with probability 0.45 (503, which
 * `retry.when` takes when the task has one, 500, which it does not, or, with `hangs`, a call that
 * outlasts the task's timeout); a failure ends the command when no attempt is left or the retry's
 * `when` refuses it.
 */
function scriptOf(r: () => number, attempts: number, onlyOn503: boolean, hangs: boolean): Script {
  const statuses: number[] = [];
  for (let a = 1; a <= attempts; a++) {
    if (r() >= 0.45) return { statuses: [...statuses, 200], outcome: 'ok' };
    const status = hangs && r() < 0.4 ? HANG : r() < 0.5 ? 503 : 500;
    statuses.push(status);
    if (onlyOn503 && status !== 503) break;
  }
  return { statuses, outcome: statuses.at(-1) === HANG ? 'timeout' : 'error' };
}

const ROUND = "(vars.round | default(0) | int)";

/**
 * Inclusive arcs (parallel branches): forward only, on the step's status alone (`vars` and whether
 * another branch's step ran would race), one taking a failure when the step fails (an unhandled
 * one ends the execution while other branches run: what they reached is timing).
 */
function inclusiveArcsOf(r: () => number, later: string[], fails: boolean): string {
  const conds = ["outcome.status == 'ok'", "outcome.status == 'error'", "outcome.status != 'ok'"];
  const arcs = Array.from({ length: later.length ? int(r, 1, 3) : 0 }, () => `      - { step: ${pick(r, later)}${r() < 0.3 ? '' : `, when: "{{ ${pick(r, conds)} }}"`} }\n`);
  if (fails) arcs.push(`      - { step: ${pick(r, later)}, when: "{{ outcome.status == 'error' }}" }\n`);
  return arcs.length ? `    next:\n      mode: inclusive\n      arcs:\n${arcs.map((a) => `  ${a}`).join('')}` : '';
}

function arcsOf(r: () => number, names: string[], i: number, kind: Kind): string {
  const later = names.slice(i + 1);
  // A back arc (to this step or an earlier one) guarded by the round counter: bounded cycles.
  const back = r() < 0.3 ? `      - { step: ${pick(r, names.slice(0, i + 1))}, when: "{{ ${r() < 0.5 ? "outcome.status != 'ok' and " : ''}${ROUND} < ${MAX_ROUNDS} }}", set: { round: "{{ ${ROUND} + 1 }}" } }\n` : '';
  if (!back && (later.length === 0 || r() < 0.15)) return '';
  if (!back && r() < 0.2) return `    next: ${pick(r, later)}\n`;
  const other = pick(r, names);
  const conds = ["outcome.status == 'ok'", "outcome.status == 'error'", "outcome.status != 'ok'", "vars.flag | default('none') == 'ok'", "vars.flag | default('none') != 'ok'", `steps.${other} is defined and steps.${other}.status == 'ok'`, `'${other}' in steps`, 'outcome.error is none', 'outcome.error is not none'];
  // Errors the engine makes itself carry their real code in a simulation too.
  if (kind === 'signal') conds.push("outcome.status == 'timeout'", "outcome.status == 'timeout' and outcome.error.code == 'wait_timeout'");
  if (kind === 'badloop') conds.push("outcome.status == 'error' and outcome.error.code == 'loop_input'");
  // A task's status is known as its step's is.
  if (kind === 'http') conds.push("outcome.tasks.b.status == 'ok'", "outcome.tasks.b.status == 'error'");
  const arcs: string[] = [];
  for (let n = later.length ? int(r, 1, 3) : 0; n > 0; n--) {
    const when = r() < 0.25 ? '' : `, when: "{{ ${pick(r, conds)} }}"`;
    const set = r() < 0.3 ? ', set: { flag: "{{ outcome.status }}" }' : '';
    arcs.push(`      - { step: ${pick(r, later)}${when}${set} }\n`);
  }
  if (back) arcs.splice(int(r, 0, arcs.length), 0, back);
  return `    next:\n${arcs.join('')}`;
}

/**
 * A plan of 2-6 steps from `seed`, its playbook at `diff/p<seed>` calling `target`. `inclusive`:
 * its arcs fire every match (parallel branches, no cycles), so a step may run twice at once: each
 * key then answers one status to every call (a step fails all its commands or none).
 */
export function randomPlaybook(seed: number, target: string, inclusive = false): PlaybookPlan {
  const r = seededRandom(seed);
  const path = `diff/p${seed}`;
  const n = int(r, 2, 6);
  const names = Array.from({ length: n }, (_, i) => (i === 0 ? 'start' : `s${i}`));
  const steps: StepPlan[] = [];
  const outcomes: SimulatedOutcomes = {};
  const answers = new Map<string, number[]>();
  let body = '';
  for (const [i, name] of names.entries()) {
    const kind = pick(r, inclusive ? (['http', 'http', 'loop', 'loop', 'child', 'timer', 'empty'] as const) : (['http', 'http', 'http', 'loop', 'loop', 'badloop', 'child', 'child', 'timer', 'signal', 'approve', 'empty'] as const));
    const attempts = int(r, 1, 3);
    const onlyOn503 = kind !== 'child' && attempts > 1 && r() < 0.4;
    const hangs = !inclusive && kind === 'child' && r() < 0.4;
    // Inclusive: one status per key, a failure only where a later step can take it.
    const fixed: Script | null = !inclusive ? null : i < n - 1 && r() < 0.4 ? { statuses: Array<number>(onlyOn503 ? 1 : attempts).fill(500), outcome: 'error' } : { statuses: [200], outcome: 'ok' };
    const retry = attempts > 1 ? `, retry: { attempts: ${attempts}${onlyOn503 ? `, when: "{{ outcome.error.code == 'http_status' and outcome.data.status == 503 }}"` : ''} }` : '';
    // A loop over no items runs no command.
    const items = kind === 'loop' ? int(r, inclusive ? 1 : 0, 3) : kind === 'child' && r() < 0.4 ? int(r, 1, 3) : 1;
    const looped = kind === 'loop' || items !== 1;
    // A parallel loop's items call keys of their own (they run at once); other commands run one after another.
    const parallel = kind === 'loop' && items > 0 && r() < 0.5;
    const keys = parallel ? Array.from({ length: items }, (_, k) => `/t/${path}/${name}/${k}`) : kind === 'http' || kind === 'loop' || kind === 'child' ? [`/t/${path}/${name}/x`] : [];
    let text = `  - step: ${name}\n`;
    // Its items literal or rendered (a template on nothing but itself: decided without data).
    const list = `[${Array.from({ length: items }, (_, k) => k).join(', ')}]`;
    if (looped) text += `    loop: { in: ${r() < 0.3 ? `"{{ ${list} }}"` : list}, mode: ${parallel ? `parallel, max_in_flight: ${items}` : 'sequential'} }\n`;
    const index = parallel ? '{{ loop.index }}' : 'x';
    // Its `in` renders to text, not a list: the engine fails the step (loop_input) before any command.
    if (kind === 'badloop') text += `    loop: { in: "{{ workload.target }}" }\n    tool: { name: b, kind: http, url: "{{ workload.target }}/never" }\n`;
    if (kind === 'http' || kind === 'loop') {
      const first = r() < 0.4 ? `      - { name: a, kind: http, url: "{{ workload.target }}/ok" }\n` : '';
      text += `    tool:\n${first}      - { name: b, kind: http, url: "{{ workload.target }}/t/${path}/${name}/${index}"${retry} }\n`;
    } else if (kind === 'child') text += `    tool: { name: kid, kind: playbook, path: ${CHILD_PATH}, args: { url: "${target}/t/${path}/${name}/x" }${retry}${hangs ? ', timeout_seconds: 2' : ''} }\n`;
    else if (kind === 'timer') text += `    wait: { for: 0.05 }\n`;
    else if (kind === 'signal') text += `    wait: { signal: never, timeout: 0.2 }\n`;
    // The test sends `go` once the step waits for it (SIGNAL).
    else if (kind === 'approve') text += `    wait: { signal: ${SIGNAL}${r() < 0.5 ? ', timeout: 30' : ''} }\n`;
    // Enough commands for every entry (one per round) and every item.
    const perKey = (inclusive ? 2 ** n : MAX_ROUNDS + 1) * (parallel ? 1 : items);
    const scripts = keys.map(() => Array.from({ length: perKey }, () => fixed ?? scriptOf(r, attempts, onlyOn503, hangs)));
    keys.forEach((key, k) => answers.set(key, scripts[k].flatMap((sc) => sc.statuses)));
    // The simulation takes a command's outcome in turn (a parallel loop's entry issues all its
    // items, oldest first); a `playbook` task's, each attempt's (a child each).
    const inOrder = parallel ? Array.from({ length: perKey * keys.length }, (_, c) => scripts[c % keys.length][Math.floor(c / keys.length)]) : (scripts[0] ?? []);
    if (kind === 'child') outcomes[name] = inOrder.flatMap((sc) => sc.statuses.map((st): Outcome => (st === 200 ? 'ok' : st === HANG ? 'timeout' : 'error')));
    else if (inOrder.length) outcomes[name] = inOrder.map((sc) => sc.outcome);
    else if (kind === 'signal') outcomes[name] = 'timeout';
    text += inclusive ? inclusiveArcsOf(r, names.slice(i + 1), keys.length > 0 && fixed?.outcome === 'error') : arcsOf(r, names, i, kind);
    body += text;
    steps.push({ name, kind, keys, scripts, items, parallel });
  }
  const yaml = `apiVersion: svc/v1\nkind: Playbook\nmetadata: { name: diff_${seed}, path: ${path} }\nworkload: { target: "${target}" }\nworkflow:\n${body}`;
  return { path, yaml, steps, outcomes, answers };
}

/**
 * The calls each key gets and the children each `playbook` task step starts when a run enters
 * the steps `entered` (a step as often as it is listed): each entry takes the next scripts of its
 * keys; a sequential loop stops at its first failing item, a parallel one (room for every item)
 * runs them all.
 */
export function expectedCalls(plan: PlaybookPlan, entered: readonly string[]): { calls: Map<string, number>; children: Map<string, number> } {
  const calls = new Map<string, number>();
  const children = new Map<string, number>();
  for (const s of plan.steps) {
    if (!s.keys.length) continue;
    const entries = entered.filter((e) => e === s.name).length;
    const taken = s.keys.map(() => 0);
    for (let e = 0; e < entries; e++) {
      for (let item = 0; item < s.items; item++) {
        const k = s.parallel ? item : 0;
        const script = s.scripts[k][taken[k]++];
        calls.set(s.keys[k], (calls.get(s.keys[k]) ?? 0) + script.statuses.length);
        if (s.kind === 'child') children.set(s.name, (children.get(s.name) ?? 0) + script.statuses.length);
        if (!s.parallel && script.outcome !== 'ok') break;
      }
    }
  }
  return { calls, children };
}
