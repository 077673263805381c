// `svc simulate --outcome STEP=...` took an outcome the step cannot have and dropped or reread it
// without a word: `--outcome approve=error` on a signal wait (meant as a rejection) simulated the
// timeout path, `timeout` on a wait without one gave it its signal, `error` on a timer fired it,
// `timeout` on a step of plain tasks failed it as an error. Each is now a usage error naming the
// step and what it can end with (exit 2), as the console offers only those; the outcomes a step
// can have simulate as before.
import { rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { simulateCommand } from '../../../src/cli/simulate.ts';
import { Capture } from '../../helpers/capture.ts';

const FILE = path.join(tmpdir(), `audit-simulate-outcome-${process.pid}.yaml`);
beforeAll(async () => {
  await writeFile(FILE, `apiVersion: svc/v1
metadata: { name: gate, path: audit/simulate-outcome }
workflow:
  - step: start
    tool: { name: t, kind: noop }
    next: cool
  - step: cool
    wait: { for: 1m }
    next: approve
  - step: approve
    wait: { signal: approval, timeout: 1h }
    next:
      - { step: open, when: "{{ outcome.status == 'timeout' }}" }
      - { step: open }
  - step: open
    wait: { signal: go }
`);
});
afterAll(async () => {
  await rm(FILE, { force: true });
});

describe('svc simulate --outcome a step cannot have', () => {
  it.each([
    ['approve=error', 'approve=error', 'approve waits for signal approval, and its signal comes (ok) or it times out (timeout)'],
    ['approve=ok,error', 'approve=error', 'approve waits for signal approval, and its signal comes (ok) or it times out (timeout)'],
    ['open=timeout', 'open=timeout', 'open waits for signal go, and its signal comes (ok): without a timeout it never times out'],
    ['cool=error', 'cool=error', 'cool waits for a time, and its timer fires (ok)'],
    ['start=timeout', 'start=timeout', "only a signal wait with a timeout, or a playbook task with timeout_seconds, times out; start's tasks end ok or error"],
  ])('%s is a usage error naming %s, nothing simulated', async (given, named, message) => {
    const out = new Capture();
    const err = new Capture();
    expect(await simulateCommand([FILE, '--outcome', given], out, err)).toBe(2);
    expect(out.text).toBe('');
    expect(err.text).toContain(`svc simulate: --outcome ${named}: ${message}`);
    expect(err.text).toMatch(/\nusage: svc simulate PLAYBOOK\.yaml /);
  });

  it('the outcomes a step can have simulate as before', async () => {
    const out = new Capture();
    expect(await simulateCommand([FILE, '--outcome', 'approve=timeout', '--outcome', 'start=error'], out, new Capture())).toBe(0);
    expect(out.text).toContain('path:   start\nstatus: failed');
    const timedOut = new Capture();
    expect(await simulateCommand([FILE, '--outcome', 'approve=timeout', '--outcome', 'cool=ok'], timedOut, new Capture())).toBe(0);
    expect(timedOut.text).toContain('path:   start → cool → approve → open\nstatus: completed');
  });
});
