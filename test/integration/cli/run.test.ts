import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { http } from '../../helpers/http.ts';
import { NODE24, ROOT } from '../../helpers/process.ts';
import { startTestStack, type TestStack } from '../../helpers/stack.ts';
import { until } from '../../helpers/until.ts';

let s: TestStack;
let dir: string;
beforeAll(async () => {
  s = await startTestStack();
  dir = await mkdtemp(join(tmpdir(), 'svc-run-cli-'));
});
afterAll(async () => {
  await s?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

type Ran = { code: number | null; stdout: string; stderr: string };
type Running = { exited: Promise<Ran>; stdout(): string; kill(signal: NodeJS.Signals): void };

/** Spawns the real `svc run` (Node 24 runs the .ts directly) against the test stack. */
function spawnRun(args: string[], env: Record<string, string> = {}): Running {
  const proc = spawn(NODE24, [`${ROOT}src/cli.ts`, 'run', ...args], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', SVC_SERVER_URL: s.url, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  proc.stdout.on('data', (c) => (stdout += String(c)));
  proc.stderr.on('data', (c) => (stderr += String(c)));
  const exited = new Promise<Ran>((ok) => proc.on('close', (code) => ok({ code, stdout, stderr })));
  return { exited, stdout: () => stdout, kill: (sig) => proc.kill(sig) };
}

const svcRun = (args: string[], env?: Record<string, string>) => spawnRun(args, env).exited;

async function playbookFile(name: string, yaml: string): Promise<string> {
  const file = join(dir, name);
  await writeFile(file, yaml);
  return file;
}

/** A port nothing listens on. */
async function closedPort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((ok) => srv.listen(0, '127.0.0.1', ok));
  const address = srv.address();
  const port = address && typeof address === 'object' ? address.port : 0;
  await new Promise((ok) => srv.close(ok));
  return port;
}

const THREE_STEPS = `
apiVersion: svc/v1
kind: Playbook
metadata: { name: three, path: cli/three }
workload: { greeting: hello }
workflow:
  - step: start
    tool: { name: say, kind: shell, command: "echo {{ workload.greeting }}" }
    next: middle
  - step: middle
    tool: { name: pause, kind: shell, command: "sleep 0.2" }
    next: end
  - step: end
    tool: { name: shout, kind: shell, command: "echo {{ steps.start.result.stdout | trim | upper }}" }
`;

describe('svc run', () => {
  it('registers a YAML file, waits and shows progress lines, the final status and the result', async () => {
    const file = await playbookFile('three.yaml', THREE_STEPS);
    const r = await svcRun([file, '--wait', '--payload', '{"greeting": "hi there"}']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const lines = r.stdout.split('\n');
    expect(lines[0]).toMatch(/^registered cli\/three version \d+ from .*three\.yaml$/);
    expect(lines[1]).toMatch(/^execution \d+ started \(cli\/three\)$/);
    for (const expected of [
      /^\[\d+\.\ds\] step start started$/,
      /^\[\d+\.\ds\] step start ok \(1\/3\)$/,
      /^\[\d+\.\ds\] step middle started$/,
      /^\[\d+\.\ds\] step middle ok \(2\/3\)$/,
      /^\[\d+\.\ds\] step end ok \(3\/3\)$/,
      /^execution \d+ completed after \d+\.\ds \(3\/3 steps\)$/,
    ]) {
      expect(lines.some((l) => expected.test(l)), `${expected} in\n${r.stdout}`).toBe(true);
    }
    const result = JSON.parse(r.stdout.slice(r.stdout.indexOf('result:\n') + 'result:\n'.length));
    expect(result).toMatchObject({ exit_code: 0, stdout: 'HI THERE\n' });
    // The execution the CLI started is the one the server completed.
    const id = Number(/^execution (\d+) started/m.exec(r.stdout)![1]);
    expect((await http(s.url, 'GET', `/api/executions/${id}`)).body).toMatchObject({ status: 'completed', path: 'cli/three' });
  });

  it('exits 1 and prints the error when the playbook fails', async () => {
    const file = await playbookFile('fails.yaml', `
apiVersion: svc/v1
kind: Playbook
metadata: { name: fails, path: cli/fails }
workflow:
  - step: start
    tool: { name: boom, kind: shell, command: "echo about to fail; exit 3" }
`);
    const r = await svcRun([file, '--wait']);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/^\[\d+\.\ds\] step start error \(1\/1\)/m);
    // The failed step ended but is not done: the counter is the execution's progress (0 %).
    expect(r.stdout).toMatch(/^execution \d+ failed after \S+ \(0\/1 steps\)$/m);
    expect(r.stdout).toMatch(/^error: .*3/m);
  });

  it('starts a catalog path without waiting', async () => {
    await s.register(THREE_STEPS.replace('path: cli/three', 'path: cli/by-path'));
    const r = await svcRun(['cli/by-path']);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe('');
    const m = /^execution (\d+) started \(cli\/by-path\)\n$/.exec(r.stdout);
    expect(m, r.stdout).not.toBeNull();
    expect(await s.wait(Number(m![1]))).toMatchObject({ status: 'completed' });
  });

  it('running an unchanged file again makes no new catalog version', async () => {
    const file = await playbookFile('same.yaml', THREE_STEPS.replace('path: cli/three', 'path: cli/same'));
    const first = await svcRun([file, '--wait']);
    expect(first.stdout).toMatch(/^registered cli\/same version 1 from .*same\.yaml$/m);
    const again = await svcRun([file, '--wait']);
    expect(again.code).toBe(0);
    expect(again.stdout).toMatch(/^cli\/same version 1 unchanged \(.*same\.yaml\)$/m);
    expect((await http(s.url, 'GET', '/api/catalog/playbook/cli/same/versions')).body.versions).toHaveLength(1);
  });

  it('reports an unknown catalog path', async () => {
    const r = await svcRun(['cli/nothing-here']);
    expect(r.code).toBe(4);
    expect(r.stderr).toContain(`'cli/nothing-here' is neither a file nor a playbook in the catalog`);
    // A missing file given by its absolute or relative path is no catalog path either: said so, not "path: must be slash-separated names".
    for (const target of ['/tmp/no-such-dir-7f3/missing.yaml', './missing.yaml']) {
      const missing = await svcRun([target]);
      expect(missing.code).toBe(1);
      expect(missing.stderr).toContain(`'${target}' is neither a file nor a playbook in the catalog`);
    }
  });

  it('rejects a --payload that is not a JSON object with exit 2', async () => {
    const payloads = ['[1, 2]', 'not json', '42', 'null'];
    const runs = await Promise.all(payloads.map((payload) => svcRun(['cli/three', '--payload', payload])));
    runs.forEach((r, i) => {
      expect(r.code, payloads[i]).toBe(2);
      expect(r.stderr).toContain('--payload');
      expect(r.stdout).toBe('');
    });
  });

  it('exits 2 on usage errors', async () => {
    const usage = await Promise.all([[], ['a', 'b'], ['a', '--no-such-flag'], ['a', '--server', 'not a url']].map((args) => svcRun(args)));
    for (const r of usage) {
      expect(r.code).toBe(2);
      expect(r.stderr).toContain('usage: svc run');
    }
    const help = await svcRun(['--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('--payload JSON');
  });

  it('shows the problems the server found in an invalid playbook file', async () => {
    const file = await playbookFile('invalid.yaml', `
apiVersion: svc/v1
kind: Playbook
metadata: { name: invalid, path: cli/invalid }
workflow:
  - step: start
    tool: { name: t, kind: teleport }
`);
    const r = await svcRun([file, '--wait']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`the server rejected ${file}`);
    // Compilers' form, so editors jump to the place: file:line:col: path: message.
    expect(r.stderr).toContain(`${file}:7:22: workflow[0].tool.kind: must be one of`);
    expect(r.stdout).toBe('');
    // With --json a program gets the refusal on stdout, its problems at their places.
    const j = await svcRun([file, '--json']);
    expect(j.code).toBe(1);
    expect(JSON.parse(j.stdout)).toMatchObject({ status: 400, stage: 'register', file, problems: [expect.objectContaining({ path: 'workflow[0].tool.kind', line: 7, column: 22 })] });
    expect(j.stderr).toContain(`the server rejected ${file}`);
  });

  it('says so in one line and exits 3 when the server is unreachable', async () => {
    const url = `http://127.0.0.1:${await closedPort()}`;
    const r = await svcRun(['cli/three', '--wait'], { SVC_SERVER_URL: url });
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(new RegExp(`^svc run: cannot reach the server at ${url}: .+\n$`));
    // --server wins over the environment.
    expect((await svcRun(['cli/three', '--server', url], { SVC_SERVER_URL: s.url })).code).toBe(3);
  });

  it('prints only the final status object with --json', async () => {
    const file = await playbookFile('three-json.yaml', THREE_STEPS.replace('path: cli/three', 'path: cli/json'));
    const r = await svcRun([file, '--wait', '--json']);
    expect(r.code).toBe(0);
    const status = JSON.parse(r.stdout);
    expect(status).toMatchObject({ status: 'completed', path: 'cli/json', result: { stdout: 'HELLO\n' } });

    const failing = await playbookFile('fails-json.yaml', `
apiVersion: svc/v1
kind: Playbook
metadata: { name: fails, path: cli/fails-json }
workflow:
  - step: start
    tool: { name: boom, kind: shell, command: "exit 3" }
`);
    const f = await svcRun([failing, '--wait', '--json']);
    expect(f.code).toBe(1);
    expect(JSON.parse(f.stdout)).toMatchObject({ status: 'failed', path: 'cli/fails-json' });

    const started = await svcRun(['cli/json', '--json']);
    expect(started.code).toBe(0);
    const now = JSON.parse(started.stdout);
    expect(now).toMatchObject({ path: 'cli/json' });
    expect(await s.wait(now.execution_id)).toMatchObject({ status: 'completed' });
  });

  it('exits 1 when the execution it waits for is cancelled, and says so', async () => {
    const file = await playbookFile('cancelled.yaml', `
apiVersion: svc/v1
kind: Playbook
metadata: { name: cancelled, path: cli/cancelled }
workflow:
  - step: start
    tool: { name: nap, kind: shell, command: "sleep 30" }
`);
    const p = spawnRun([file, '--wait']);
    await until('a progress line', () => p.stdout().includes('step start started'));
    const id = Number(/^execution (\d+) started/m.exec(p.stdout())![1]);
    const cancel = await http(s.url, 'POST', `/api/executions/${id}/cancel`, { reason: 'stopped from the test' });
    expect(cancel.body.status).toBe('cancelled');
    const r = await p.exited;
    expect(r.code).toBe(1);
    expect(r.stderr).toBe('');
    expect(r.stdout).toMatch(new RegExp(`^execution ${id} cancelled after \\d+\\.\\ds \\(0/1 steps\\)$`, 'm'));
    expect(r.stdout).toMatch(/^error: stopped from the test$/m);
    expect(r.stdout).not.toContain('result:');
  });

  it('Ctrl-C stops waiting without cancelling the execution', async () => {
    const file = await playbookFile('slow.yaml', `
apiVersion: svc/v1
kind: Playbook
metadata: { name: slow, path: cli/slow }
workflow:
  - step: start
    tool: { name: nap, kind: shell, command: "sleep 30" }
`);
    const p = spawnRun([file, '--wait']);
    await until('a progress line', () => p.stdout().includes('step start started'));
    p.kill('SIGINT');
    const r = await p.exited;
    expect(r.code).toBe(130);
    expect(r.stderr).toContain('was not cancelled and keeps running');
    const id = Number(/^execution (\d+) started/m.exec(r.stdout)![1]);
    expect(r.stderr).toContain(`${s.url}/api/executions/${id}`);
    // Each next step is a command that sends SVC_API_TOKEN, not a bare curl (401 under SVC_AUTH=token).
    expect(r.stderr).toContain(`svc cancel ${id} --server ${s.url}`);
    expect(r.stderr).not.toMatch(/curl -s -X POST/);
    expect((await http(s.url, 'GET', `/api/executions/${id}`)).body.status).toBe('running');
    await http(s.url, 'POST', `/api/executions/${id}/cancel`, {});
  });
});
