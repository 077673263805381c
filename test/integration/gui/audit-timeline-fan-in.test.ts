// Two runs of one step at once (the branches of an inclusive `next` meeting at it) may end in
// either order; the engine exits the one that ended. The Gantt closed the step's oldest run at
// the first step.exit instead: the first run's command, still running, was drawn `cancelled`
// (though it completed), its run took the other run's end and output, and the other run's bar
// stretched on to the first run's end.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { buildTimeline } from '../../../gui/src/timeline/model.ts';
import { startTestStack, UNSANDBOXED_SHELL, type TestStack } from '../../helpers/stack.ts';

let s: TestStack;
let dir: string;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'fan-in-'));
  // Unsandboxed: the two runs of `meet` tell each other apart by a directory on the host.
  s = await startTestStack({ workerOptions: { shell: UNSANDBOXED_SHELL } });
}, 120_000);
afterAll(async () => {
  await s?.close();
  rmSync(dir, { recursive: true, force: true });
});

it('closes the run of a step that ended, not the oldest one still running', async () => {
  const gate = join(dir, 'first');
  await s.register(`apiVersion: svc/v1
kind: Playbook
metadata: { name: fan_in, path: audit/fan_in }
workflow:
  - step: start
    tool: { name: t, kind: noop }
    next: { mode: inclusive, arcs: [ { step: quick }, { step: slow } ] }
  - step: quick
    tool: { name: t, kind: noop }
    next: meet
  - step: slow
    tool: { name: t, kind: shell, command: "sleep 0.3" }
    next: meet
  - step: meet
    tool: { name: t, kind: shell, command: "if mkdir ${gate} 2>/dev/null; then sleep 1.5; echo long; else echo short; fi" }
`);
  const id = await s.run('audit/fan_in');
  const execution = await s.wait(id);
  expect(execution.status).toBe('completed');
  const events = await s.events(id);
  // The run entered first (from quick) ended last.
  const exits = events.filter((e) => e.event_type === 'step.exit' && e.step === 'meet').map((e) => e.result.stdout.trim());
  expect(exits).toEqual(['short', 'long']);
  const { bars } = buildTimeline(events as never, execution);
  const runs = bars.filter((b) => b.step === 'meet' && b.kind === 'step');
  expect(runs).toHaveLength(2);
  const commandOf = (run: (typeof bars)[number]) => bars.find((b) => b.parent === run.id && b.kind === 'command')!;
  for (const run of runs) {
    const cmd = commandOf(run);
    // Each run ends with its own command, and says what that command gave back.
    expect(cmd.status).toBe('ok');
    expect(run.status).toBe('ok');
    expect(run.end!).toBeGreaterThanOrEqual(cmd.end!);
    expect((run.output as { stdout: string }).stdout).toBe(((cmd.output as { tasks: { t: { data: { stdout: string } } } }).tasks.t.data.stdout));
  }
  const [first, second] = runs;
  expect((first.output as { stdout: string }).stdout.trim()).toBe('long');
  expect((second.output as { stdout: string }).stdout.trim()).toBe('short');
  expect(second.end!).toBeLessThan(first.end!);
}, 60_000);
