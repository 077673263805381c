import type { NormalizedPlaybook } from '../src/dsl/parse-playbook.ts';
import { conditionSource } from '../src/dsl/render.ts';
import { templateDataReads, type DataReads } from '../src/dsl/template-data-reads.ts';

/** The outcomes of the steps that ran so far (the machine's `context.steps`), by step. */
type Ran = Readonly<Record<string, { status: string }>>;

/** Where a simulation stops because a decision reads a result it has no example of. */
export type Undecided = { step: string; at: 'next' | 'loop.in'; needs: string[] };

/**
 * What a simulation knows of results: the example per step (the playbook's `examples:` with the
 * caller's over them). Steps without one are answered with `null` data, so a decision reading
 * their result is not the simulation's to make: it "depends on data".
 */
export class SimulationData {
  readonly results: Record<string, unknown>;
  private readonly reads = new Map<string, { next: DataReads; loop: DataReads | null }>();
  /** Whether an arc `set` anywhere reads a result with no example (then `vars` may hold such data). */
  private readonly varsFromData: boolean;

  private readonly pb: NormalizedPlaybook;
  /** Steps whose result is always none: timer waits (the machine's outcome of one that fired is `{status: ok, result: null}`). */
  private readonly resultless: ReadonlySet<string>;

  /** `useExamples: false`: only `given` (registration: a sample is no certainty). */
  constructor(pb: NormalizedPlaybook, given: Record<string, unknown> = {}, useExamples = true) {
    this.pb = pb;
    this.results = { ...(useExamples ? (pb.examples ?? {}) : {}), ...given };
    this.resultless = new Set(pb.workflow.filter((s) => s.wait?.kind === 'timer').map((s) => s.step));
    for (const s of pb.workflow) {
      const next = templateDataReads(s.next.arcs.map((a) => [a.when === undefined ? null : conditionSource(a.when), a.set ?? null]));
      this.reads.set(s.step, { next, loop: s.loop ? templateDataReads(s.loop.in) : null });
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
    return [...out];
  }

  /** Whether the arcs of `step`, just ended, read results with no example (`ran`: the outcomes so far). */
  undecidedNext(step: string, ran: Ran): Undecided | null {
    const needs = this.missing(this.reads.get(step)!.next, step, ran);
    return needs.length ? { step, at: 'next', needs } : null;
  }

  /** Whether the loop `in` of `step`, just entered, reads results with no example. */
  undecidedLoop(step: string, ran: Ran): Undecided | null {
    const loop = this.reads.get(step)!.loop;
    const needs = loop ? this.missing(loop, step, ran).filter((s) => s !== step) : [];
    return needs.length ? { step, at: 'loop.in', needs } : null;
  }
}

/** One line saying what a simulation could not decide, for people (svc simulate, the console). */
export function undecidedText(u: Undecided): string {
  const what = u.at === 'next' ? `the next step after ${u.step}` : `the items of ${u.step}`;
  return `${what} depends on data: no example result of ${u.needs.join(', ')}`;
}
