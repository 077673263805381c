// `svc simulate --outcome STEP=error` (or `timeout`) on a step without `tool` (no task, no wait:
// it only routes) was dropped without a word: the step "completed" and the run went on as if
// nothing had been asked, so a user testing an error arc on such a step read a path no run takes
// for the answer. Such a step has no command to end: the outcome is a usage error (exit 2) naming
// it, as for the other outcomes a step cannot have; `ok` is what it always does and stays allowed.
import { rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { simulateCommand } from '../../../src/cli/simulate.ts';
import { Capture } from '../../helpers/capture.ts';

const FILE = path.join(tmpdir(), `audit-simulate-toolless-${process.pid}.yaml`);
beforeAll(async () => {
  await writeFile(FILE, `apiVersion: svc/v1
metadata: { name: route, path: audit/simulate-toolless }
workflow:
  - step: start
    tool: { name: t, kind: noop }
    next: route
  - step: route
    next:
      - { step: alert, when: "{{ outcome.status == 'error' }}" }
      - { step: done }
  - step: alert
  - step: done
`);
});
afterAll(async () => {
  await rm(FILE, { force: true });
});

describe('svc simulate --outcome on a step without tool', () => {
  it.each(['route=error', 'route=timeout', 'route=ok,error'])('%s is a usage error naming the step, nothing simulated', async (given) => {
    const out = new Capture();
    const err = new Capture();
    expect(await simulateCommand([FILE, '--outcome', given], out, err)).toBe(2);
    expect(out.text).toBe('');
    expect(err.text).toMatch(/svc simulate: --outcome route=(error|timeout): route runs no task \(it has no tool\)/);
    expect(err.text).toMatch(/\nusage: svc simulate PLAYBOOK\.yaml /);
  });

  it('route=ok simulates as before', async () => {
    const out = new Capture();
    expect(await simulateCommand([FILE, '--outcome', 'route=ok'], out, new Capture())).toBe(0);
    expect(out.text).toContain('path:   start → route → done\nstatus: completed');
  });
});
