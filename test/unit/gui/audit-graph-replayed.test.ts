// The console's execution graph of a retry drew the steps it replayed (`step.replayed`: they took
// the outcome of the execution retried, their tasks never ran here) `completed`, exactly as the
// steps that ran. They are now marked: class `replayed`, `data-replayed`, and said in the node's
// label and tooltip.
import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { expect, it } from 'vitest';
import { EVENT } from '../../../machines/event-types.ts';
import type { ExecutionEvent } from '../../../gui/src/api.ts';
import { StepGraphView } from '../../../gui/src/graph/StepGraphView.tsx';
import { graphFromYaml } from '../../../gui/src/graph/model.ts';
import { fromEvents, replayedFromEvents } from '../../../gui/src/graph/step-status.ts';

const YAML = `apiVersion: svc/v1
kind: Playbook
metadata: { name: retried, path: demo/retried }
workflow:
  - step: first
    tool: { name: a, kind: noop }
    next: second
  - step: second
    tool: { name: b, kind: noop }
`;

let id = 0;
const ev = (event_type: string, step: string | null): ExecutionEvent => ({ event_id: ++id, event_type, step, context: {}, created_at: '2026-12-01T07:00:00.000Z' }) as ExecutionEvent;

it('marks the steps a retry replayed, and only those', () => {
  const events = [
    ev(EVENT.executionStarted, null),
    ev(EVENT.stepEnter, 'first'),
    ev(EVENT.stepReplayed, 'first'),
    ev(EVENT.stepExit, 'first'),
    ev(EVENT.stepEnter, 'second'),
    ev(EVENT.commandIssued, 'second'),
    ev(EVENT.stepExit, 'second'),
  ];
  expect([...replayedFromEvents(events)]).toEqual(['first']);
  const html = renderToStaticMarkup(createElement(StepGraphView, { graph: graphFromYaml(YAML)!, states: fromEvents(events), replayed: replayedFromEvents(events) }));
  const node = (step: string) => html.match(new RegExp(`<g[^>]*data-step="${step}"[^>]*>`))?.[0] ?? '';
  expect(node('first')).toMatch(/class="node st-completed replayed"/);
  expect(node('first')).toMatch(/aria-label="step first, completed, replayed from the execution retried"/);
  expect(node('first')).toMatch(/data-replayed="true"/);
  expect(node('second')).toMatch(/class="node st-completed"/);
  expect(node('second')).not.toMatch(/replayed/);
  expect(html).toContain('<title>first (replayed from the execution retried)</title>');
});
