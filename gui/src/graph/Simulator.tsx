import { useState } from 'react';
import { END_NODE, START_NODE, type StepGraph } from './model.ts';
import type { StepStates } from './step-status.ts';
import { StepGraphView } from './StepGraphView.tsx';

type Sim = { states: StepStates; active: string[]; finished: 'completed' | 'failed' | null };

const begin = (graph: StepGraph): Sim => {
  const entry = graph.edges.filter((e) => e.from === START_NODE).map((e) => e.to);
  return { states: Object.fromEntries(entry.map((s) => [s, 'active' as const])), active: entry, finished: null };
};

/**
 * A dry run in the browser, no server: the user picks each active step's outcome (an arc it
 * leaves by, or an error) and watches the statechart move. Conditions are the user's to decide.
 */
export function Simulator({ graph }: { graph: StepGraph }) {
  const [sim, setSim] = useState<Sim>(() => begin(graph));
  const leave = (step: string, to: string | null) => {
    setSim((s) => {
      const states: StepStates = { ...s.states, [step]: to === null ? 'failed' : 'completed' };
      let active = s.active.filter((a) => a !== step);
      if (to !== null && to !== END_NODE) {
        states[to] = 'active';
        active = [...active.filter((a) => a !== to), to];
      }
      const finished = to === null ? 'failed' : active.length === 0 ? 'completed' : null;
      return { states, active: finished === 'failed' ? [] : active, finished };
    });
  };
  return (
    <div className="simulator">
      <div className="actions" aria-live="polite">
        {sim.finished ? <span>Simulated execution {sim.finished}.</span> : null}
        {sim.active.map((step) => (
          <fieldset key={step} className="sim-step">
            <legend>{step} ends with</legend>
            {graph.edges
              .filter((e) => e.from === step)
              .map((e) => (
                <button key={`${e.to}-${e.label ?? ''}`} type="button" onClick={() => leave(step, e.to)}>
                  ok → {e.to === END_NODE ? 'end' : e.to}
                  {e.label ? ` (${e.label})` : ''}
                </button>
              ))}
            <button type="button" className="danger" onClick={() => leave(step, null)}>
              error
            </button>
          </fieldset>
        ))}
        <button type="button" onClick={() => setSim(begin(graph))}>
          Restart
        </button>
      </div>
      <StepGraphView graph={graph} states={sim.states} ended={sim.finished} />
    </div>
  );
}
