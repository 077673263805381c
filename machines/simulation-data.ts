import type { NormalizedPlaybook, NormalizedStep } from '../src/dsl/parse-playbook.ts';
import { conditionSource } from '../src/dsl/render.ts';
import { templateDataReads, type DataReads } from '../src/dsl/template-data-reads.ts';
import { CODE } from './error-codes.ts';

/** The outcomes of the steps that ran so far (the machine's `context.steps`), by step. */
type Ran = Readonly<Record<string, { status: string; error?: { code?: string } | null }>>;

/** A `needs` entry for the error of a step the simulation failed: its code is the simulation's own. */
const ERROR_NEED = '.error';

/**
 * Where a simulation stops because a decision reads data it does not have (`at`: a step's arcs,
 * its loop's items, or what the engine renders as the step runs: a timer's `until`, a task's
 * limit key, a child's path and args): `needs`, the steps whose results it has no example of;
 * `workload`, names of the workload only a start gives.
 */
export type Undecided = { step: string; at: 'next' | 'loop.in' | 'enter'; needs: string[]; workload?: string[] };

/**
 * What a simulation knows of results: the example per step (the playbook's `examples:` with the
 * caller's over them). Steps without one are answered with `null` data, so a decision reading
 * their result is not the simulation's to make: it "depends on data".
 */
export class SimulationData {
  readonly results: Record<string, unknown>;
  private readonly reads = new Map<string, { next: DataReads; loop: DataReads | null; enter: DataReads }>();
  /** Whether an arc `set` anywhere reads a result with no example (then `vars` may hold such data). */
  private readonly varsFromData: boolean;

  private readonly pb: NormalizedPlaybook;
  /** Steps whose result is always none: timer waits (the machine's outcome of one that fired is `{status: ok, result: null}`). */
  private readonly resultless: ReadonlySet<string>;

  /** Each step's last task, whose data its example result is. */
  private readonly lastTask: ReadonlyMap<string, string | undefined>;

  /** The names the simulated workload holds (the playbook's defaults and the payload given). */
  private readonly workload: ReadonlySet<string>;

  /** `useExamples: false`: only `given` (registration: a sample is no certainty). `workload`: the simulated one. */
  constructor(pb: NormalizedPlaybook, workload: Record<string, unknown>, given: Record<string, unknown> = {}, useExamples = true) {
    this.pb = pb;
    this.workload = new Set(Object.keys(workload));
    this.results = { ...(useExamples ? (pb.examples ?? {}) : {}), ...given };
    this.resultless = new Set(pb.workflow.filter((s) => s.wait?.kind === 'timer').map((s) => s.step));
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
   * has no example of. A timer step, and a step whose signal wait timed out, have none to know
   * (no signal came: `{status: timeout, result: null}`), so a decision on them is the machine's.
   */
  private missing(reads: DataReads, current: string, ran: Ran | null): string[] {
    const out = new Set<string>();
    const done = (s: string) => ran === null || Object.hasOwn(ran, s);
    const timedOut = (s: string) => ran !== null && Object.hasOwn(ran, s) && ran[s].status === 'timeout';
    const known = (s: string) => this.has(s) || this.resultless.has(s) || timedOut(s);
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
    // An example is the data of its step's last task: another task's is not known.
    for (const t of reads.tasks) {
      const s = t.step ?? current;
      if (done(s) && this.has(s) && (t.task === null || t.task !== this.lastTask.get(s))) out.add(t.task === null ? `${s}.tasks` : `${s}.tasks.${t.task}`);
    }
    return [...out];
  }

  /** The names `reads` takes from the workload that the simulated one lacks (a start gives them, or the run fails). */
  private missingWorkload(reads: DataReads): string[] {
    return [...reads.workload].filter((name) => !this.workload.has(name));
  }

  /** Whether the arcs of `step`, just ended, read data the simulation lacks (`ran`: the outcomes so far). */
  undecidedNext(step: string, ran: Ran): Undecided | null {
    const reads = this.reads.get(step)!.next;
    return undecided(step, 'next', this.missing(reads, step, ran), this.missingWorkload(reads));
  }

  /** Whether what the engine renders as `step` runs (its timer, limit keys, children) reads data the simulation lacks. */
  undecidedEnter(step: string, ran: Ran): Undecided | null {
    const reads = this.reads.get(step)!.enter;
    return undecided(step, 'enter', this.missing(reads, step, ran).filter((s) => s !== step), this.missingWorkload(reads));
  }

  /** Whether the loop `in` of `step`, just entered, reads data the simulation lacks. */
  undecidedLoop(step: string, ran: Ran): Undecided | null {
    const loop = this.reads.get(step)!.loop;
    if (!loop) return null;
    return undecided(step, 'loop.in', this.missing(loop, step, ran).filter((s) => s !== step), this.missingWorkload(loop));
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

function undecided(step: string, at: Undecided['at'], needs: string[], workload: string[]): Undecided | null {
  if (!needs.length && !workload.length) return null;
  return workload.length ? { step, at, needs, workload } : { step, at, needs };
}

/** One line saying what a simulation could not decide, for people (svc simulate, the console). */
export function undecidedText(u: Undecided): string {
  const what = u.at === 'next' ? `the next step after ${u.step}` : u.at === 'loop.in' ? `the items of ${u.step}` : `running ${u.step}`;
  const errors = u.needs.filter((n) => n.endsWith(ERROR_NEED));
  const results = u.needs.filter((n) => !n.endsWith(ERROR_NEED));
  const lacking = [
    ...(results.length ? [`no example result of ${results.join(', ')}`] : []),
    ...(errors.length ? [`no error code of ${errors.map((n) => n.slice(0, -ERROR_NEED.length)).join(', ')} (a simulated failure has none)`] : []),
    ...(u.workload?.length ? [`no value of ${u.workload.map((n) => `workload.${n}`).join(', ')} (a start gives it)`] : []),
  ];
  return `${what} depends on data: ${lacking.join('; ')}`;
}
