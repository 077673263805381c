import pg from 'pg';
import { START_WRITE_STATEMENT, STEP_WRITE_NO_PICK_STATEMENT, STEP_WRITE_STATEMENT, STEP_WRITE_STRANDED_STATEMENT, UNIT_WRITE_LIMITED_STATEMENT, UNIT_WRITE_NO_PICK_STATEMENT, UNIT_WRITE_STATEMENT } from '../src/db/unit-write.ts';
import { round } from './stats.ts';

type QueryFn = (this: pg.Client, ...args: unknown[]) => unknown;
type Totals = { count: number; ms: number };

/** A short, stable name for a statement: what a write statement writes, the prepared name, or its first words with numbers elided. */
function statementKey(arg: unknown): string {
  if (arg && typeof arg === 'object' && 'name' in arg && typeof arg.name === 'string' && arg.name) {
    if (arg.name === UNIT_WRITE_STATEMENT) return 'unit write (the one statement)';
    if (arg.name === STEP_WRITE_STATEMENT) return 'unit write (the step kind)';
    if (arg.name === STEP_WRITE_STRANDED_STATEMENT) return 'unit write (the step kind, stranded commands announced)';
    if (arg.name === STEP_WRITE_NO_PICK_STATEMENT) return 'unit write (the step kind, no claim-ahead pick)';
    if (arg.name === UNIT_WRITE_LIMITED_STATEMENT) return "unit write (freeing a limit's slot)";
    if (arg.name === UNIT_WRITE_NO_PICK_STATEMENT) return 'unit write (no claim-ahead pick)';
    if (arg.name === START_WRITE_STATEMENT) return 'unit write (the start kind)';
    if (arg.name === 'svc_read_unit') return 'unit read (executions and commands not held)';
    return `prepared ${arg.name}`;
  }
  const text = typeof arg === 'string' ? arg : arg && typeof arg === 'object' && 'text' in arg && typeof arg.text === 'string' ? arg.text : '?';
  return text.replace(/\s+/g, ' ').replace(/\d+/g, 'N').trim().slice(0, 70);
}

/**
 * Times every statement any pg.Client of this process sends (the in-process server's included),
 * from the call to its answer, while `recording`. Measurement only: installed by the bench, it
 * wraps `pg.Client.prototype.query` and leaves results untouched.
 */
export class StatementTimer {
  readonly totals = new Map<string, Totals>();
  recording = false;
  #original: QueryFn | undefined;

  install(): void {
    const proto = pg.Client.prototype as unknown as { query: QueryFn };
    const original = proto.query;
    this.#original = original;
    const timer = this;
    proto.query = function (this: pg.Client, ...args: unknown[]): unknown {
      if (!timer.recording) return original.apply(this, args);
      const key = statementKey(args[0]);
      const t0 = performance.now();
      const done = () => timer.#add(key, performance.now() - t0);
      const last = args.at(-1);
      if (typeof last === 'function') {
        // Callback form (pg.Pool#query uses it).
        const cb = last as (...a: unknown[]) => unknown;
        args[args.length - 1] = (...a: unknown[]) => {
          done();
          return cb(...a);
        };
        return original.apply(this, args);
      }
      const out = original.apply(this, args);
      if (out instanceof Promise) out.then(done, done);
      return out;
    };
  }

  uninstall(): void {
    if (this.#original) (pg.Client.prototype as unknown as { query: QueryFn }).query = this.#original;
    this.#original = undefined;
  }

  #add(key: string, ms: number): void {
    const t = this.totals.get(key) ?? { count: 0, ms: 0 };
    t.count++;
    t.ms += ms;
    this.totals.set(key, t);
  }

  reset(): void {
    this.totals.clear();
  }

  /** Per statement kind: count per step, ms each (mean), ms per step; biggest first. */
  perStep(steps: number): { statement: string; perStep: number; msEach: number; msPerStep: number }[] {
    return [...this.totals]
      .map(([statement, t]) => ({ statement, perStep: round(t.count / steps, 3), msEach: round(t.ms / t.count, 3), msPerStep: round(t.ms / steps, 3) }))
      .sort((a, b) => b.msPerStep - a.msPerStep);
  }
}
