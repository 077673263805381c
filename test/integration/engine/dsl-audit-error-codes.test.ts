// The `next:` example of docs/playbook-dsl.md "Error codes", run as written: arcs that test a
// task's error code must also hold when the step succeeds (its outcome's error is none, and
// templates are strict: an attribute of none is an error that fails the execution).
import { readFileSync } from 'node:fs';
import { load } from 'js-yaml';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestStack, UNSANDBOXED_SHELL, type TestStack } from '../../helpers/stack.ts';
import type { Json } from '../../helpers/http.ts';
import { simulatePlaybook } from '../../../machines/simulate-playbook.ts';
import { undecidedText } from '../../../machines/simulation-data.ts';

let s: TestStack;
beforeAll(async () => {
  s = await startTestStack({ workerOptions: { shell: UNSANDBOXED_SHELL } });
});
afterAll(async () => s?.close());

/** The arcs of the docs' example, as the docs show them (the YAML block right after the Error codes paragraph). */
function documentedArcs(): string {
  const doc = readFileSync(join(import.meta.dirname, '../../../docs/playbook-dsl.md'), 'utf8');
  const section = doc.slice(doc.indexOf('## Error codes'));
  const block = /```yaml\n(next:\n[\s\S]*?)```/.exec(section);
  if (!block) throw new Error('docs/playbook-dsl.md: no next: example under Error codes');
  return block[1].replace(/^/gm, '    ').trimEnd();
}

const playbook = (name: string, command: string) => `apiVersion: svc/v1
kind: Playbook
metadata: { name: ${name}, path: audit/error-codes/${name} }
workflow:
  - step: start
    tool: { name: a, kind: shell, command: "${command}", timeout_seconds: 0.5 }
${documentedArcs()}
  - step: later
    tool: { name: l, kind: shell, command: "echo later" }
  - step: alert
    tool: { name: x, kind: shell, command: "echo alert" }
`;

async function run(name: string, command: string): Promise<{ final: Json; entered: string[] }> {
  const reg = await s.register(playbook(name, command));
  const id = await s.run(reg.path);
  const final = await s.wait(id);
  const entered = (await s.events(id)).filter((e: Json) => e.event_type === 'step.enter').map((e: Json) => e.step);
  return { final, entered };
}

describe("the Error codes section's arcs", () => {
  it('route a timeout to later, another error to alert, and let a step that succeeded end its branch', async () => {
    const timedOut = await run('timeout', 'sleep 5');
    expect(timedOut.entered).toEqual(['start', 'later']);
    expect(timedOut.final).toMatchObject({ status: 'completed', error: null });

    const failed = await run('exit', 'exit 3');
    expect(failed.entered).toEqual(['start', 'alert']);
    expect(failed.final).toMatchObject({ status: 'completed', error: null });

    // Neither arc fires for a success: the branch ends, the execution completes with the step's result.
    const ok = await run('ok', 'echo fine');
    expect(ok.final.error).toBeNull();
    expect(ok.entered).toEqual(['start']);
    expect(ok.final).toMatchObject({ status: 'completed', result: { exit_code: 0, stdout: 'fine\n' } });
  });
});

describe('svc simulate on arcs that test an error code', () => {
  it('does not decide on the code of a simulated failure (which no run has): depends on data, whatever the examples', async () => {
    const yaml = playbook('sim', 'sleep 5');
    const real = await run('sim', 'sleep 5');
    expect(real.entered).toEqual(['start', 'later']);
    const example = { start: { exit_code: null, stdout: '', stderr: '' } };
    // With an example result the simulation took the code of its own failure ('simulated') and
    // predicted start → alert, a path the run does not take.
    const r = simulatePlaybook(yaml, { start: 'error' }, { results: example });
    expect(r.status).toBe('depends_on_data');
    expect(r.path).toEqual(['start']);
    expect(r.undecided).toEqual({ step: 'start', at: 'next', needs: ['start.error'] });
    expect(undecidedText(r.undecided!)).toBe('the next step after start depends on data: no error code of start (a simulated failure has none)');
    // A success is decided (the status guards the code) and is what a run does.
    expect(simulatePlaybook(yaml, { start: 'ok' }, { results: example })).toMatchObject({ status: 'completed', path: ['start'] });
  });

  it('still decides on the status, and on the error of a failure the engine itself made (loop_input)', () => {
    const yaml = `apiVersion: svc/v1
kind: Playbook
metadata: { name: sim2, path: audit/error-codes/sim2 }
workflow:
  - step: start
    loop: { in: "{{ 5 }}", iterator: x }
    tool: { name: a, kind: noop }
    next:
      - { step: bad_input, when: "{{ outcome.status == 'error' and outcome.error.code == 'loop_input' }}" }
      - { step: other, when: "{{ steps.start.status == 'error' }}" }
  - step: bad_input
  - step: other
`;
    expect(simulatePlaybook(yaml)).toMatchObject({ status: 'completed', path: ['start', 'bad_input'] });
  });
});

describe("the first example's arcs (docs/playbook-dsl.md, the fetch_users playbook)", () => {
  /** The `next:` of the example's start step, as the docs show it. */
  function exampleArcs(): unknown {
    const doc = readFileSync(join(import.meta.dirname, '../../../docs/playbook-dsl.md'), 'utf8');
    const block = /```yaml\n(apiVersion:[\s\S]*?)```/.exec(doc);
    const parsed = block ? load(block[1]) : null;
    const workflow = parsed && typeof parsed === 'object' && 'workflow' in parsed && Array.isArray(parsed.workflow) ? parsed.workflow : [];
    expect(workflow.map((st: Json) => st.step)).toEqual(['start', 'store', 'report']);
    return workflow[0].next;
  }

  it('store the users when the call succeeded and report when it failed', async () => {
    const arcs = JSON.stringify(exampleArcs());
    const yaml = (name: string, command: string) => `apiVersion: svc/v1
kind: Playbook
metadata: { name: ${name}, path: audit/first-example/${name} }
workflow:
  - step: start
    tool: { name: users, kind: shell, command: "${command}" }
    next: ${arcs}
  - step: store
    tool: { name: insert, kind: noop }
  - step: report
    tool: { name: notify, kind: shell, command: "echo failed" }
`;
    const entered = async (name: string, command: string) => {
      const reg = await s.register(yaml(name, command));
      const id = await s.run(reg.path);
      const final = await s.wait(id);
      return { final, steps: (await s.events(id)).filter((e: Json) => e.event_type === 'step.enter').map((e: Json) => e.step) };
    };
    const ok = await entered('ok', 'echo []');
    expect(ok.steps).toEqual(['start', 'store']);
    const failed = await entered('failed', 'exit 7');
    // An arc without `when` fires only when the step succeeded: the report needs its own `when`.
    expect(failed.steps).toEqual(['start', 'report']);
    expect(failed.final).toMatchObject({ status: 'completed', result: { stdout: 'failed\n' } });
  });
});
