import { useMemo, useState } from 'react';
import { simulatePlaybook, type SimulatedOutcomes } from '../../../machines/simulate-playbook.ts';
import { undecidedText } from '../../../machines/simulation-data.ts';
import type { StepGraph } from './model.ts';
import type { StepStates } from './step-status.ts';
import { StepGraphView } from './StepGraphView.tsx';

type Outcome = 'ok' | 'error';

/**
 * A dry run in the browser, no server: the playbook's own statechart (`simulatePlaybook`, the code
 * `svc simulate` runs) with the user choosing each waiting step's outcome; arcs and their `when`
 * conditions are decided by the same semantics as a real execution.
 */
export function Simulator({ graph, yaml }: { graph: StepGraph; yaml: string }) {
  // Outcomes chosen so far, per step in the order chosen (a step that runs again takes the next).
  const [chosen, setChosen] = useState<SimulatedOutcomes>({});
  const sim = useMemo(() => {
    try {
      return { result: simulatePlaybook(yaml, chosen, { pauseWhenUndecided: true }), error: null };
    } catch (error) {
      return { result: null, error: error instanceof Error ? error.message : String(error) };
    }
  }, [yaml, chosen]);
  if (!sim.result) return <p className="error">The playbook cannot be simulated: {sim.error}</p>;
  const { result } = sim;
  const decide = (step: string, outcome: Outcome) =>
    setChosen((c) => {
      const before = c[step];
      return { ...c, [step]: [...(Array.isArray(before) ? before : before ? [before] : []), outcome] };
    });
  const states: StepStates = Object.fromEntries(Object.entries(result.steps).map(([name, view]) => [name, view.status]));
  const waiting = result.waiting ?? [];
  const finished = waiting.length === 0 ? result.status : null;
  return (
    <div className="simulator">
      <div className="actions" aria-live="polite">
        {result.undecided ? (
          // The same verdict svc simulate prints: a decision on a result with no example is not guessed.
          <span>Simulation stopped: {undecidedText(result.undecided)} (declare it under examples:).</span>
        ) : finished ? (
          <span>
            Simulated execution {finished}.{result.error ? ` ${result.error.step ? `${result.error.step}: ` : ''}${result.error.message}` : ''}
          </span>
        ) : null}
        {waiting.map((step) => (
          <fieldset key={step} className="sim-step">
            <legend>{step} ends with</legend>
            <button type="button" onClick={() => decide(step, 'ok')}>
              ok
            </button>
            <button type="button" className="danger" onClick={() => decide(step, 'error')}>
              error
            </button>
          </fieldset>
        ))}
        <button type="button" onClick={() => setChosen({})}>
          Restart
        </button>
      </div>
      <p className="muted">Path: {result.path.join(' → ') || '(none yet)'}</p>
      <StepGraphView graph={graph} states={states} ended={finished === 'completed' || finished === 'failed' ? finished : null} />
    </div>
  );
}
