import { useEffect, useMemo, useRef, useState } from 'react';
import type { StepView } from '../../../machines/execution-view.ts';
import { ALL_CODES } from '../../../machines/error-codes.ts';
import { inapplicableOutcome } from '../../../machines/inapplicable-outcome.ts';
import { playbookFromYaml, simulatePlaybook, type SimulatedOutcomes } from '../../../machines/simulate-playbook.ts';
import { outcomeProblem, type SimulatedOutcome } from '../../../machines/simulated-outcome.ts';
import type { NormalizedStep } from '../../../src/dsl/parse-playbook.ts';
import { undecidedText, type Undecided } from '../../../machines/simulation-data.ts';
import { isObject } from '../../../src/objects.ts';
import { END_NODE, START_NODE, byStepOrder, type StepGraph } from './model.ts';
import { enteredAlongPath, type StepStates } from './step-status.ts';
import { StepGraphView } from './StepGraphView.tsx';
import { withOutcome } from './with-outcome.ts';

type Outcome = 'ok' | 'error' | 'timeout';
type Choice = { label: string; outcome: Outcome; danger?: boolean };

/** The codes a simulated failure may have (`error:CODE`), as the simulation takes them: a task outcome's, not its own `simulated`. */
const FAILURE_CODES = ALL_CODES.filter((c) => outcomeProblem(`error:${c}`) === undefined);

/**
 * What can happen next to a waiting step: the outcomes the simulation takes of it
 * (machines/inapplicable-outcome.ts, the rule `svc simulate --outcome` is held to), worded by
 * what it waits for: a step's work ends ok or with an error (a `playbook` task with
 * `timeout_seconds` may also time out, its attempt failing with code `timeout`); a signal arrives
 * or (a wait with a `timeout`) times out; a timer fires.
 */
function choicesOf(step: string, view: StepView | undefined, declared: NormalizedStep | undefined): { legend: string; choices: Choice[] } {
  const can = (c: Choice): boolean => !declared || inapplicableOutcome(declared, c.outcome) === undefined;
  const wait = view?.wait;
  if (wait?.kind === 'timer') return { legend: `${step} waits for its timer`, choices: [{ label: 'timer fires', outcome: 'ok' as const }].filter(can) };
  if (wait?.kind === 'signal') {
    return {
      legend: `${step} waits for signal ${wait.signal ?? ''}`.trim(),
      choices: [{ label: 'signal arrives', outcome: 'ok' as const }, { label: 'times out', outcome: 'timeout' as const, danger: true }].filter(can),
    };
  }
  // A loop takes one outcome per item (its commands, oldest first): say which, else the same
  // question repeats with nothing to tell the items apart. By its index, from 0, as the error a
  // failed item ends the step with ("item 1: ..."), the Gantt and `loop_index` name it; then its
  // place among them.
  const loop = view?.loop;
  const index = loop ? Math.min(loop.done, loop.length - 1) : 0;
  return {
    legend: loop ? `${step}: item ${index} (${index + 1} of ${loop.length}) ends with` : `${step} ends with`,
    choices: [
      { label: 'ok', outcome: 'ok' as const },
      { label: 'error', outcome: 'error' as const, danger: true },
      { label: 'times out', outcome: 'timeout' as const, danger: true },
    ].filter(can),
  };
}

/**
 * What the user can do about a stop on data, by what it lacks: a step's result (`needs` naming the
 * step alone) is an example under `examples:`; a workload or args value is the payload's; a
 * failure's error code (`X.error`) is the one chosen with its error. Neither helps a task's data
 * other than the last task's (`X.tasks.t`: no example gives it), nor a read of the start itself (`start`).
 */
function undecidedHint(u: Undecided): string {
  const hints = [
    ...(u.needs.some((n) => !n.includes('.')) ? ['declare the result under examples:'] : []),
    // A failure's code is the one chosen with it (`error:CODE`); a bare error has none.
    ...(u.needs.some((n) => n === `${u.step}.error`) ? [`restart and choose the error code ${u.step} fails with`] : []),
    ...(u.workload?.length || u.args?.length ? ['give it in the payload'] : []),
  ];
  return hints.length ? ` (${hints.join(', or ')})` : '';
}

/** The payload text as a start's payload: a JSON object, else the problem with it. */
function payloadOf(text: string): { payload: Record<string, unknown> } | { problem: string } {
  let value: unknown;
  try {
    value = JSON.parse(text.trim() === '' ? '{}' : text);
  } catch (error) {
    return { problem: `not JSON: ${error instanceof Error ? error.message : String(error)}` };
  }
  return isObject(value) ? { payload: value } : { problem: 'must be a JSON object' };
}

/**
 * A dry run in the browser, no server: the playbook's own statechart (`simulatePlaybook`, the code
 * `svc simulate` runs) with the user choosing each waiting step's outcome (a wait's: its signal
 * or its timeout); arcs and their `when` conditions are decided by the same semantics as a real execution.
 */
export function Simulator({ graph, yaml }: { graph: StepGraph; yaml: string }) {
  // Outcomes chosen so far, per step in the order chosen (a step that runs again takes the next).
  const [chosen, setChosen] = useState<SimulatedOutcomes>({});
  // The code each step's `error` fails with (none: the simulation's own, a bare `error`).
  const [codes, setCodes] = useState<Readonly<Record<string, string>>>({});
  // A start's payload, as `svc simulate --payload` takes it: what a start gives (a value the
  // workload does not default) is otherwise unknown, and the simulation stops on it.
  const [payloadText, setPayloadText] = useState('{}');
  const read = useMemo(() => payloadOf(payloadText), [payloadText]);
  const sim = useMemo(() => {
    try {
      const pb = playbookFromYaml(yaml);
      const payload = 'payload' in read ? read.payload : {};
      return { result: simulatePlaybook(pb, chosen, { pauseWhenUndecided: true, payload }), steps: new Map(pb.workflow.map((s) => [s.step, s])), error: null };
    } catch (error) {
      return { result: null, steps: null, error: error instanceof Error ? error.message : String(error) };
    }
  }, [yaml, chosen, read]);
  // The last question answered goes with its fieldset: focus goes to Restart (it fell to the page's body).
  const restart = useRef<HTMLButtonElement>(null);
  const asking = (sim.result?.waiting?.length ?? 0) > 0;
  useEffect(() => {
    if (asking || (document.activeElement && document.activeElement !== document.body)) return;
    restart.current?.focus();
  }, [asking]);
  const payloadField = (
    <div className="sim-payload">
      <label htmlFor="sim-payload">Payload of the simulated start (JSON, merged into the workload)</label>
      <textarea id="sim-payload" className="code" rows={3} value={payloadText} onChange={(e) => setPayloadText(e.target.value)} spellCheck={false} aria-invalid={'problem' in read} />
      {'problem' in read ? <p className="error">Payload: {read.problem}</p> : null}
    </div>
  );
  if (!sim.result || !sim.steps) {
    return (
      <div className="simulator">
        {payloadField}
        <p className="error">The playbook cannot be simulated: {sim.error}</p>
      </div>
    );
  }
  const { result, steps } = sim;
  const decide = (step: string, outcome: SimulatedOutcome) => setChosen((c) => withOutcome(c, step, outcome));
  const codeOf = (step: string): string => (Object.hasOwn(codes, step) ? codes[step] : '');
  const states: StepStates = Object.fromEntries(Object.entries(result.steps).map(([name, view]) => [name, view.status]));
  // Asked in playbook order (the simulation lists them in object key order: a step "3" before "20").
  const waiting = byStepOrder(result.waiting ?? [], (s) => s, [...steps.keys()]);
  const finished = waiting.length === 0 ? result.status : null;
  return (
    <div className="simulator">
      {payloadField}
      <div className="actions" aria-live="polite">
        {result.undecided ? (
          // The same verdict svc simulate prints: a decision on a result with no example is not guessed.
          <span>
            Simulation stopped: {undecidedText(result.undecided)}
            {undecidedHint(result.undecided)}.
          </span>
        ) : finished ? (
          <span>
            Simulated execution {finished}.{result.error ? ` ${result.error.step ? `${result.error.step}: ` : ''}${result.error.message}` : ''}
          </span>
        ) : null}
        {waiting.map((step, i) => {
          const { legend, choices } = choicesOf(step, result.steps[step], steps.get(step));
          // Keyed by place, not step: the next step's question reuses the one answered, whose
          // button keeps the keyboard's focus (a new fieldset left it on the page's body).
          return (
            <fieldset key={i} className="sim-step">
              <legend>{legend}</legend>
              {choices.map((c) => (
                <button key={c.outcome} type="button" className={c.danger ? 'danger' : undefined} onClick={() => decide(step, c.outcome === 'error' && codeOf(step) ? (`error:${codeOf(step)}` as SimulatedOutcome) : c.outcome)}>
                  {c.label}
                </button>
              ))}
              {choices.some((c) => c.outcome === 'error') ? (
                <label className="sim-code">
                  error code{' '}
                  <select value={codeOf(step)} onChange={(e) => setCodes({ ...codes, [step]: e.target.value })}>
                    <option value="">none (simulated)</option>
                    {FAILURE_CODES.map((code) => (
                      <option key={code} value={code}>
                        {code}
                      </option>
                    ))}
                  </select>
                </label>
              ) : null}
            </fieldset>
          );
        })}
        <button type="button" onClick={() => setChosen({})} ref={restart}>
          Restart
        </button>
      </div>
      <p className="muted">Path: {result.path.join(' → ') || '(none yet)'}</p>
      <StepGraphView graph={graph} states={states} entered={enteredAlongPath(result.path, result.from, START_NODE, END_NODE)} ended={finished === 'completed' || finished === 'failed' ? finished : null} />
    </div>
  );
}
