// The `next:` example of docs/playbook-dsl.md "Error codes", run as written: arcs that test a
// task's error code must also hold when the step succeeds (its outcome's error is none, and
// templates are strict: an attribute of none is an error that fails the execution).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestStack, UNSANDBOXED_SHELL, type TestStack } from '../../helpers/stack.ts';
import type { Json } from '../../helpers/http.ts';

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
