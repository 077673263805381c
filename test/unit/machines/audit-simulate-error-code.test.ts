// A user's test (simulatePlaybook, `svc simulate --outcome`) could fail a step only with the
// simulation's own code (`simulated`), so every decision on the code (`when:` on
// `outcome.error.code`, an arc's or a `playbook` task's `retry.when`, as docs/playbook-dsl.md's
// *Error codes* shows them) stopped `depends_on_data`: no test could reach the branch a connection
// error takes, nor a retry on a timeout. An outcome `error:CODE` now fails the command with that
// code (a task outcome code of the registry; another is refused naming the field), decided as a
// run decides on it; a bare `error` stays the code-less failure it was.
import { describe, expect, it } from 'vitest';
import { simulatePlaybook } from '../../../machines/simulate-playbook.ts';
import { parseOutcomes } from '../../../src/cli/simulate.ts';

const ARCS = `apiVersion: svc/v1
metadata: { name: codes, path: audit/simulate-error-code }
workflow:
  - step: start
    tool: { name: call, kind: http, url: "http://127.0.0.1:9/x" }
    next:
      - { step: later, when: "{{ outcome.status == 'error' and outcome.error.code in ['timeout', 'connection'] }}" }
      - { step: alert, when: "{{ outcome.status == 'error' }}" }
      - { step: done }
  - step: later
  - step: alert
  - step: done
`;

const RETRY = `apiVersion: svc/v1
metadata: { name: codes_retry, path: audit/simulate-error-code-retry }
workflow:
  - step: start
    tool: { name: kid, kind: playbook, path: jobs/child, retry: { attempts: 3, when: "{{ outcome.error.code == 'timeout' }}" } }
`;

describe('an outcome error:CODE', () => {
  it('takes the arc that tests the code, as a run does', () => {
    expect(simulatePlaybook(ARCS, { start: 'error:connection' })).toMatchObject({ status: 'completed', path: ['start', 'later'] });
    expect(simulatePlaybook(ARCS, { start: 'error:http_status' })).toMatchObject({ status: 'completed', path: ['start', 'alert'] });
    // A failure without a code still decides nothing on it.
    expect(simulatePlaybook(ARCS, { start: 'error' })).toMatchObject({ status: 'depends_on_data', undecided: { step: 'start', needs: ['start.error'] } });
  });

  it('is the error the execution fails with, a loop item\'s too', () => {
    const alone = ARCS.replace(/    next:\n(      - .*\n)+/, '');
    expect(simulatePlaybook(alone, { start: 'error:http_status' }).error).toEqual({ message: 'simulated failure', code: 'http_status', step: 'start' });
    const loop = alone.replace('    tool:', '    loop: { in: [1, 2], mode: parallel }\n    tool:');
    expect(simulatePlaybook(loop, { start: ['ok', 'error:connection'] }).error).toEqual({ message: 'item 1: simulated failure', code: 'connection', step: 'start' });
  });

  it('decides a playbook task\'s retry.when on its code', () => {
    expect(simulatePlaybook(RETRY, { start: ['error:timeout', 'error:timeout', 'ok'] })).toMatchObject({ status: 'completed', commands: 3 });
    expect(simulatePlaybook(RETRY, { start: 'error:timeout' })).toMatchObject({ status: 'failed', commands: 3, error: { code: 'timeout' } });
    expect(simulatePlaybook(RETRY, { start: ['error:not_found'] })).toMatchObject({ status: 'failed', commands: 1, error: { code: 'not_found' } });
    expect(simulatePlaybook(RETRY, { start: 'error' })).toMatchObject({ status: 'depends_on_data', undecided: { at: 'retry.when' } });
  });

  it('a code no task fails with is refused, naming the field', () => {
    expect(() => simulatePlaybook(ARCS, { start: 'error:conection' } as never)).toThrow(`outcomes.start: no task fails with code "conection" (did you mean 'connection'?)`);
    expect(() => simulatePlaybook(ARCS, { start: ['ok', 'error:unauthorized'] } as never)).toThrow('outcomes.start[1]: no task fails with code "unauthorized"');
  });

  it('svc simulate --outcome takes it', () => {
    expect(parseOutcomes(['start=error:connection'])).toEqual({ start: 'error:connection' });
    expect(parseOutcomes(['start=ok,error:timeout'])).toEqual({ start: ['ok', 'error:timeout'] });
  });
});
