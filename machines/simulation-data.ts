import type { NormalizedPlaybook, NormalizedStep } from '../src/dsl/parse-playbook.ts';
import { conditionSource } from '../src/dsl/render.ts';
import { templateDataReads, type DataReads } from '../src/dsl/template-data-reads.ts';
import { CODE } from './error-codes.ts';

/** The outcomes of the steps that ran so far (the machine's `context.steps`), by step. */
type Ran = Readonly<Record<string, { status: string; result?: unknown; error?: { code?: string } | null }>>;

/** A `needs` entry for the error of a step the simulation failed: its code is the simulation's own. */
const ERROR_NEED = '.error';

/**
 * Where a simulation stops because a decision reads data it does not have (`at`: a step's arcs,
 * its loop's items, or what the engine renders as the step runs: a timer's `until`, a task's
 * limit key, a child's path and args; a `playbook` task's `retry.when` after a simulated failure): `needs`, the steps whose results it has no example of;
 * `workload`, `args`, names of the workload and args only a start gives; `start`, with no start
 * known (registration), the roots read whole that any start decides (`workload`, `args`,
 * `execution`: run as a child or not).
 */
export type Undecided = { step: string; at: 'next' | 'loop.in' | 'enter' | 'retry.when'; needs: string[]; workload?: string[]; args?: string[]; start?: string[] };

/** What a simulation knows of its start: the workload and args it runs with, or null (registration: any start). */
export type SimulatedStart = { workload: Record<string, unknown>; args: Record<string, unknown> } | null;

/**
 * What a simulation knows of results: the example per step (the playbook's `examples:` with the
 * caller's over them). Steps without one are answered with `null` data, so a decision reading
 * their result is not the simulation's to make: it "depends on data".
 */
export class SimulationData {
  readonly results: Record<string, unknown>;
  private readonly reads = new Map<string, { next: DataReads; loop: DataReads | null; enter: DataReads }>();
  /** What each `retry.when` reads, parsed once (a path search asks at every simulated failure). */
  private readonly retryReads = new Map<string, DataReads>();
  /** Whether an arc `set` anywhere reads a result with no example (then `vars` may hold such data). */
  private readonly varsFromData: boolean;

  private readonly pb: NormalizedPlaybook;
  /**
   * Steps whose result is always none, in a run as in the machine: timer waits (the outcome of
   * one that fired is `{status: ok, result: null}`), steps that run nothing (no tool, no wait:
   * they only route) and steps whose last task is a `noop` (its data is null, per item of a loop).
   */
  private readonly resultless: ReadonlySet<string>;
  /** Steps with a `loop`: one that ran no item has the empty list for its result, example or not. */
  private readonly looped: ReadonlySet<string>;

  /** Each step's last task, whose data its example result is. */
  private readonly lastTask: ReadonlyMap<string, string | undefined>;

  /** The names the simulated workload and args hold (the playbook's defaults and the payload given); null: no start is known. */
  private readonly start: { workload: ReadonlySet<string>; args: ReadonlySet<string> } | null;

  /** `useExamples: false`: only `given` (registration: a sample is no certainty). `start`: the simulated one. */
  constructor(pb: NormalizedPlaybook, start: SimulatedStart, given: Record<string, unknown> = {}, useExamples = true) {
    this.pb = pb;
    this.start = start && { workload: new Set(Object.keys(start.workload)), args: new Set(Object.keys(start.args)) };
    this.results = { ...(useExamples ? (pb.examples ?? {}) : {}), ...given };
    this.resultless = new Set(pb.workflow.filter((s) => s.wait?.kind === 'timer' || (s.tasks.length === 0 && !s.wait) || s.tasks.at(-1)?.kind === 'noop').map((s) => s.step));
    this.looped = new Set(pb.workflow.filter((s) => s.loop).map((s) => s.step));
    this.lastTask = new Map(pb.workflow.map((s) => [s.step, s.tasks.at(-1)?.name]));
    for (const s of pb.workflow) {
      const next = templateDataReads(s.next.arcs.map((a) => [a.when === undefined ? null : conditionSource(a.when), a.set ?? null]));
      this.reads.set(s.step, { next, loop: s.loop ? templateDataReads(s.loop.in) : null, enter: templateDataReads(renderedAsRun(s)) });
    }
    this.varsFromData = pb.workflow.some((s) => s.next.arcs.some((a) => a.set !== undefined && this.missing(templateDataReads(a.set), s.step, null).length > 0));
  }

  /** Whether `step` has an example result. */
  has(step: string): boolean {
    return Object.hasOwn(this.results, step);
  }

  /**
   * The steps (that ran, per `ran`; every step when `ran` is null) whose result `reads` needs and
   * has no example of. A step whose result is always none (resultless), a step whose signal wait
   * timed out (no signal came: `{status: timeout, result: null}`) and a loop that ran no item
   * (its result is `[]`) have none to know, so a decision on them is the machine's.
   */
  private missing(reads: DataReads, current: string, ran: Ran | null): string[] {
    const out = new Set<string>();
    const done = (s: string) => ran === null || Object.hasOwn(ran, s);
    const timedOut = (s: string) => ran !== null && Object.hasOwn(ran, s) && ran[s].status === 'timeout';
    const noItems = (s: string) => ran !== null && this.looped.has(s) && Object.hasOwn(ran, s) && Array.isArray(ran[s].result) && ran[s].result.length === 0;
    const known = (s: string) => this.has(s) || this.resultless.has(s) || timedOut(s) || noItems(s);
    if (reads.own && !known(current)) out.add(current);
    for (const s of reads.allSteps ? this.pb.workflow.map((w) => w.step) : reads.steps) if (done(s) && !known(s)) out.add(s);
    if (reads.vars && this.varsFromData) out.add('vars');
    // A failure the simulation chose has no real code or message (no example gives them): a
    // decision on them is not the simulation's. A success has no error and a failure the engine
    // made itself (loop_input, a template error) has its own, as in a run.
    for (const e of reads.errors ?? []) {
      const s = e ?? current;
      const chosen = ran === null || (Object.hasOwn(ran, s) && ran[s].status === 'error' && ran[s].error?.code === CODE.simulated);
      if (done(s) && chosen) out.add(`${s}${ERROR_NEED}`);
    }
    // An example is the data of its step's last task, and a resultless step's known none is its
    // last task's: another task's (a shell task's before a closing noop, read by a later task's
    // limit key as the step is entered) is not known.
    for (const t of reads.tasks) {
      const s = t.step ?? current;
      const lastKnown = this.has(s) || this.resultless.has(s);
      if ((s === current || done(s)) && lastKnown && (t.task === null || t.task !== this.lastTask.get(s))) out.add(t.task === null ? `${s}.tasks` : `${s}.tasks.${t.task}`);
    }
    return [...out];
  }

  /**
   * What `reads` takes from the start that the simulated one lacks (a start gives it, or the run
   * fails): workload and args names; with no start known, also the roots read whole (`decides`:
   * the read chooses a path, not only renders a value that must exist).
   */
  private missingStart(reads: DataReads, decides: boolean): Pick<Undecided, 'workload' | 'args' | 'start'> {
    const workload = [...reads.workload].filter((name) => !this.start?.workload.has(name));
    const args = [...reads.args].filter((name) => !this.start?.args.has(name));
    const start = this.start || !decides ? [] : [...reads.start];
    return { ...(workload.length ? { workload } : {}), ...(args.length ? { args } : {}), ...(start.length ? { start } : {}) };
  }

  /** Whether the arcs of `step`, just ended, read data the simulation lacks (`ran`: the outcomes so far). */
  undecidedNext(step: string, ran: Ran): Undecided | null {
    const reads = this.reads.get(step)!.next;
    return undecided(step, 'next', this.missing(reads, step, ran), this.missingStart(reads, true));
  }

  /** Whether what the engine renders as `step` runs (its timer, limit keys, children) reads data the simulation lacks. */
  undecidedEnter(step: string, ran: Ran): Undecided | null {
    const reads = this.reads.get(step)!.enter;
    // A later task's limit key, or a child's path and args, may read the outcomes of the step's
    // earlier tasks (`tasks.<name>`): data the simulation lacks, as a run renders them with it.
    return undecided(step, 'enter', this.missing(reads, step, ran).filter((s) => s !== step || reads.own), this.missingStart(reads, false));
  }

  /**
   * Whether a `playbook` task's `retry.when` (`when`), decided on a failure the simulation chose
   * for `step`, reads data the simulation lacks: that failure's error (no real code or message,
   * unless `codeGiven`: `error:CODE`), or results and start values as an arc's would.
   */
  undecidedRetry(step: string, when: string, ran: Ran, codeGiven = false): Undecided | null {
    let reads = this.retryReads.get(when);
    if (!reads) this.retryReads.set(when, (reads = templateDataReads(conditionSource(when))));
    const needs = this.missing(reads, step, ran).filter((s) => s !== step);
    if (!codeGiven && reads.errors?.some((e) => e === null || e === step)) needs.push(`${step}${ERROR_NEED}`);
    return undecided(step, 'retry.when', needs, this.missingStart(reads, true));
  }

  /** Whether the loop `in` of `step`, just entered, reads data the simulation lacks. */
  undecidedLoop(step: string, ran: Ran): Undecided | null {
    const loop = this.reads.get(step)!.loop;
    if (!loop) return null;
    return undecided(step, 'loop.in', this.missing(loop, step, ran).filter((s) => s !== step), this.missingStart(loop, true));
  }
}

/** The templates the engine itself renders as a step runs (a worker renders the rest of its tasks). */
function renderedAsRun(s: NormalizedStep): unknown[] {
  const out: unknown[] = [];
  if (s.wait?.kind === 'timer' && s.wait.until !== undefined) out.push(s.wait.until);
  for (const t of s.tasks) {
    if (t.limit?.key !== undefined) out.push(t.limit.key);
    if (t.kind === 'playbook') out.push(t.path, t.args ?? null);
  }
  return out;
}

function undecided(step: string, at: Undecided['at'], needs: string[], start: Pick<Undecided, 'workload' | 'args' | 'start'>): Undecided | null {
  if (!needs.length && !start.workload && !start.args && !start.start) return null;
  return { step, at, needs, ...start };
}

/** One line saying what a simulation could not decide, for people (svc simulate, the console). */
export function undecidedText(u: Undecided): string {
  const what = u.at === 'next' ? `the next step after ${u.step}` : u.at === 'loop.in' ? `what ${u.step} loops over` : u.at === 'retry.when' ? `whether ${u.step} retries its failed task` : `running ${u.step}`;
  const errors = u.needs.filter((n) => n.endsWith(ERROR_NEED));
  const results = u.needs.filter((n) => !n.endsWith(ERROR_NEED));
  const lacking = [
    ...(results.length ? [`no example result of ${results.join(', ')}`] : []),
    ...(errors.length ? [`no error code of ${errors.map((n) => n.slice(0, -ERROR_NEED.length)).join(', ')} (a simulated failure has none)`] : []),
    ...(u.workload?.length || u.args?.length ? [`no value of ${[...(u.workload ?? []).map((n) => `workload.${n}`), ...(u.args ?? []).map((n) => `args.${n}`)].join(', ')} (a start gives it)`] : []),
    ...(u.start?.length ? [`no start to read ${u.start.join(', ')} from (any start may come)`] : []),
  ];
  return `${what} depends on data: ${lacking.join('; ')}`;
}
