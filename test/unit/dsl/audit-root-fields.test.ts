// The fields of `outcome` (an arc's: the step's outcome; retry.when's: the failed task's),
// `signal`, `loop` and `steps.<name>` are fixed by the engine, so a misspelt one is known when the
// playbook is registered, as `execution.<field>` is. They were registered in silence and failed
// every run: `when: "{{ outcome.sttus == 'ok' }}"` failed the execution with template_error
// ('outcome.sttus' is undefined: 'outcome' has no attribute 'sttus').
import { describe, expect, it } from 'vitest';
import { parsePlaybook } from '../../../src/dsl/parse-playbook.ts';

const playbook = (parts: { when?: string; command?: string; retryWhen?: string; loopCommand?: string; waitWhen?: string }) => `apiVersion: svc/v1
kind: Playbook
metadata: { name: f, path: f/f }
workflow:
  - step: start
    tool:
      - { name: t1, kind: shell, command: "${parts.command ?? 'true'}", retry: { attempts: 2, when: "${parts.retryWhen ?? "{{ outcome.status == 'error' }}"}" } }
    next:
      - { step: approve, when: "${parts.when ?? "{{ outcome.status == 'ok' }}"}" }
  - step: approve
    wait: { signal: go, timeout: 1h }
    next:
      - { step: each, when: "${parts.waitWhen ?? "{{ outcome.status == 'ok' and signal.payload.x | default(false) }}"}" }
  - step: each
    loop: { in: [1, 2], iterator: it }
    tool: { name: t2, kind: shell, command: "${parts.loopCommand ?? 'echo {{ loop.index }} {{ it }}'}" }
`;

const problemsOf = (yaml: string) => {
  const r = parsePlaybook(yaml);
  return r.ok ? [] : r.problems.map((p) => `${p.path}: ${p.message}`);
};

describe('fields of the engine-made roots at registration', () => {
  it('registers the fields the engine gives', () => {
    const ok = parsePlaybook(
      playbook({
        when: "{{ outcome.status == 'ok' and outcome.result is none and outcome.error is none and outcome.tasks.t1.status == 'ok' }}",
        retryWhen: "{{ outcome.status == 'error' and outcome.error.code == 'exit_code' and outcome.data.exit_code == 3 }}",
        waitWhen: "{{ outcome.status == 'ok' and signal.payload and signal.by and signal.name == 'go' and steps.start.status == 'ok' and steps.start.result and steps.start.tasks.t1 }}",
        loopCommand: 'echo {{ loop.index }} {{ loop.length }} {{ loop.first }} {{ loop.last }} {{ loop.item }} {% for x in [1] %}{{ loop.index0 }}{% endfor %}',
      }),
    );
    expect(ok).toMatchObject({ ok: true });
  });

  it.each([
    [{ when: "{{ outcome.sttus == 'ok' }}" }, "workflow[0].next[0].when: 'outcome.sttus' is undefined: outcome has status, result, error, tasks (did you mean 'status'?)"],
    [{ retryWhen: '{{ outcome.result.exit_code == 3 }}' }, "workflow[0].tool[0].retry.when: 'outcome.result' is undefined: a task's outcome has status, data, error"],
    [{ waitWhen: '{{ signal.paylod.x }}' }, "workflow[1].next[0].when: 'signal.paylod' is undefined: signal has name, payload, by (did you mean 'payload'?)"],
    [{ when: '{{ signal.payload.x }}' }, "workflow[0].next[0].when: 'signal.payload' is undefined: step 'start' waits for no signal (signal is none in its arcs)"],
    [{ loopCommand: 'echo {{ loop.idx }}' }, "workflow[2].tool.command: 'loop.idx' is undefined: loop has index, length, first, last, item"],
    [{ waitWhen: "{{ steps.start.sttus == 'ok' }}" }, "workflow[1].next[0].when: 'steps.start.sttus' is undefined: a step's outcome has status, result, error, tasks (did you mean 'status'?)"],
    [{ loopCommand: "echo {{ steps.start['reslt'] }}" }, "workflow[2].tool.command: 'steps.start.reslt' is undefined: a step's outcome has status, result, error, tasks (did you mean 'result'?)"],
  ])('refuses %o', (parts, problem) => {
    expect(problemsOf(playbook(parts))).toEqual([problem]);
  });

  it('warns of a guarded read of a field that is never there', () => {
    const r = parsePlaybook(playbook({ when: "{{ outcome.reslt | default('') }}" }));
    expect(r).toMatchObject({ ok: true });
    expect(r.ok && r.warnings).toEqual([
      "workflow[0].next[0].when: 'outcome.reslt' is never defined here (outcome has status, result, error, tasks (did you mean 'result'?)): its | default(...) or is defined always takes the undefined side",
    ]);
  });
});
