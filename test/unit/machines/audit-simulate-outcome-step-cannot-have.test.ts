// simulatePlaybook, as a user's test calls it (docs/playbook-dsl.md, "The same in your own tests"),
// took an outcome its step cannot have and reread or dropped it without a word, where `svc
// simulate` refuses the same outcome (exit 2): `{approve: 'error'}` on a signal wait (meant as a
// rejection) simulated the timeout path, `timeout` on a wait without one gave it its signal,
// `error` on a timer fired it, `error` on a step without tool let it complete, `timeout` on a step
// of plain tasks failed it as an error. So a test of the rejection or error path passed on a path
// no run takes. Each now throws an Error naming the field and what the step can end with.
import { describe, expect, it } from 'vitest';
import { simulatePlaybook, type SimulatedOutcomes } from '../../../machines/simulate-playbook.ts';

const YAML = `apiVersion: svc/v1
metadata: { name: gate, path: audit/simulate-outcome-cannot-have }
workflow:
  - step: start
    tool: { name: t, kind: http, url: "http://127.0.0.1:9/x" }
    next: cool
  - step: cool
    wait: { for: 30m }
    next: approve
  - step: approve
    wait: { signal: approval, timeout: 1h }
    next:
      - { step: route, when: "{{ outcome.status == 'timeout' }}" }
      - { step: route }
  - step: route
    next:
      - { step: open, when: "{{ outcome.status == 'ok' }}" }
      - { step: recover, when: "{{ outcome.status == 'error' }}" }
  - step: open
    wait: { signal: go }
  - step: recover
`;

describe('simulatePlaybook with an outcome the step cannot have', () => {
  it.each<[SimulatedOutcomes, string]>([
    [{ approve: 'error' }, 'outcomes.approve: approve cannot end "error": approve waits for signal approval, and its signal comes (ok) or it times out (timeout)'],
    [{ approve: ['ok', 'error'] }, 'outcomes.approve[1]: approve cannot end "error": approve waits for signal approval'],
    [{ open: 'timeout' }, 'outcomes.open: open cannot end "timeout": open waits for signal go, and its signal comes (ok): without a timeout it never times out'],
    [{ cool: 'error' }, 'outcomes.cool: cool cannot end "error": cool waits for a time, and its timer fires (ok)'],
    [{ route: 'error' }, 'outcomes.route: route cannot end "error": route runs no task (it has no tool), so it always ends ok and follows its arcs'],
    [{ start: 'timeout' }, `outcomes.start: start cannot end "timeout": only a signal wait with a timeout, or a playbook task with timeout_seconds, times out; start's tasks end ok or error`],
  ])('%j throws, naming the field', (outcomes, message) => {
    expect(() => simulatePlaybook(YAML, outcomes)).toThrow(message);
  });

  it('the outcomes a step can have simulate as before', () => {
    expect(simulatePlaybook(YAML, { approve: 'timeout', start: 'error' })).toMatchObject({ status: 'failed', path: ['start'] });
    expect(simulatePlaybook(YAML, { approve: ['timeout'], cool: 'ok', route: 'ok', open: 'ok' })).toMatchObject({ status: 'completed', path: ['start', 'cool', 'approve', 'route', 'open'] });
  });
});
