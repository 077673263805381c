// A registration warning that names its field without a colon after it (`metadata.terminal.visibel
// is not a field …`, `workflow[1].tool.auth has no effect …`) is printed at that field's
// file:line:col, as one written `path: message` is, not at 1:1 where an editor finds nothing.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { runSvc } from '../../helpers/process.ts';

let a: TestApp;
let dir: string;
beforeAll(async () => {
  a = await startTestApp();
  dir = await mkdtemp(join(tmpdir(), 'svc-warning-positions-'));
}, 60_000);
afterAll(async () => {
  await a?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const AGENT = `apiVersion: svc/v1
kind: Playbook
metadata:
  name: warned
  path: cli/warned/agent
  agent: true
  terminal:
    visibel: true
workflow:
  - step: start
    tool: { name: a, kind: noop }
`;

const PARENT = `apiVersion: svc/v1
kind: Playbook
metadata: { name: parent, path: cli/warned/parent }
workflow:
  - step: start
    next: [{ step: child }]
  - step: child
    tool: { name: kid, kind: playbook, path: cli/warned/parent, auth: some_auth }
`;

describe('registration warnings at their field', () => {
  it('a warning that starts with the path of its field, no colon after it, points at that field', async () => {
    const agent = join(dir, 'agent.yaml');
    const parent = join(dir, 'parent.yaml');
    await writeFile(agent, AGENT);
    await writeFile(parent, PARENT);
    const r = await runSvc(['catalog', 'register', agent, parent], { SVC_SERVER_URL: a.url });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain(`${agent}:8:5: warning: metadata.terminal.visibel is not a field`);
    expect(r.stderr).toContain(`${parent}:8:65: warning: workflow[1].tool.auth has no effect on a playbook task`);
  });
});
