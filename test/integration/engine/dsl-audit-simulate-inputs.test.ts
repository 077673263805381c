// `svc simulate --payload` stands for a start with that payload. A start whose merged workload
// fails the playbook's `inputs:` is refused (422 invalid_inputs, nothing runs); the simulation ran
// it anyway and printed a path and `completed`, a run that cannot happen.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { simulateCommand } from '../../../src/cli/simulate.ts';
import { Capture } from '../../helpers/capture.ts';
import { http, type Json } from '../../helpers/http.ts';
import { startTestStack, type TestStack } from '../../helpers/stack.ts';

const YAML = `apiVersion: svc/v1
kind: Playbook
metadata: { name: inp, path: audit/simulate-inputs }
inputs:
  target: { type: string, required: true }
  mode: { type: string, enum: [fast, slow], default: fast }
workflow:
  - step: start
    next:
      - { step: b, when: "{{ workload.target == 'x' and workload.mode == 'fast' }}" }
      - { step: c }
  - step: b
  - step: c
`;

let s: TestStack;
let dir: string;
let file: string;
beforeAll(async () => {
  s = await startTestStack();
  dir = mkdtempSync(join(tmpdir(), 'svc-sim-inputs-'));
  file = join(dir, 'inp.yaml');
  writeFileSync(file, YAML);
  await s.register(YAML);
});
afterAll(async () => {
  await s?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

async function simulate(...args: string[]): Promise<{ code: number; out: string; err: string }> {
  const out = new Capture();
  const err = new Capture();
  const code = await simulateCommand([file, ...args], out, err);
  return { code, out: out.text, err: err.text };
}

describe('svc simulate --payload against the inputs', () => {
  it('refuses a payload a start refuses, naming each field, and prints no path', async () => {
    const payload = { target: 5, mode: 'turbo' };
    const start = await http(s.url, 'POST', '/api/run/playbook', { path: 'audit/simulate-inputs', payload });
    expect(start.status).toBe(422);
    expect(start.body.detail.code).toBe('invalid_inputs');
    const sim = await simulate('--payload', JSON.stringify(payload));
    expect(sim.code).toBe(2);
    expect(sim.out).toBe('');
    expect(sim.err).toBe('svc simulate: a start with this payload is refused (invalid_inputs): workload.target: must be string, got integer; workload.mode: must be one of "fast", "slow", got "turbo"\nusage: svc simulate PLAYBOOK.yaml [--outcome STEP=ok|error[:CODE]|timeout[,...]]... [--result STEP=JSON]... [--payload JSON] [--paths] [--json]\n');
    expect((await simulate('--paths', '--payload', JSON.stringify(payload))).code).toBe(2);
  });

  it('simulates a payload a start takes as the run goes, and leaves what a start gives undecided', async () => {
    const id = await s.run('audit/simulate-inputs', { target: 'x' });
    await s.wait(id);
    const entered = (await s.events(id)).filter((e: Json) => e.event_type === 'step.enter').map((e: Json) => e.step);
    expect(entered).toEqual(['start', 'b']);
    const sim = await simulate('--payload', '{"target": "x"}');
    expect(sim.code).toBe(0);
    expect(sim.out).toContain('path:   start → b\nstatus: completed\n');
    // No payload: the required input is what a start gives, not a refusal.
    expect((await simulate()).out).toContain('no value of workload.target (a start gives it)');
  });
});
