// `svc inspect ID` of no such execution exited 1, where every other command (svc status, logs,
// cancel) exits 4, not found, as docs/cli.md's table says; with --json it wrote nothing on stdout.
// And its lines' first column was 28 wide, so a child's end (`child.finished seq 1 completed`, 30)
// pushed that line's state and steps two columns right of every other line's.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { http } from '../../helpers/http.ts';
import { runSvc } from '../../helpers/process.ts';
import { startTestStack, type TestStack } from '../../helpers/stack.ts';
import { until } from '../../helpers/until.ts';

let s: TestStack;
let env: Record<string, string>;
beforeAll(async () => {
  s = await startTestStack();
  env = { SVC_SERVER_URL: s.url };
  for (const [name, body] of [
    ['kid', '  - step: only\n    tool: { name: k, kind: noop }\n'],
    ['parent', '  - step: kids\n    tool: { name: k, kind: playbook, path: cli/inspect-cols/kid }\n'],
  ]) {
    const r = await http(s.url, 'POST', '/api/catalog/playbook', { content: `apiVersion: svc/v1\nmetadata: { name: ${name}, path: cli/inspect-cols/${name} }\nworkflow:\n${body}` });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
  }
});
afterAll(async () => {
  await s?.close();
});

it('no such execution: exit 4 as svc status, the server\'s reason on stderr', async () => {
  const status = await runSvc(['status', '999'], env);
  const inspect = await runSvc(['inspect', '999'], env);
  expect(status.code).toBe(4);
  expect(inspect.code, inspect.stderr).toBe(4);
  expect(inspect.stdout).toBe('');
  expect(inspect.stderr).toBe('svc inspect: execution 999 not found\n');
});

it('no such execution with --json: {error, status: 404, detail} on stdout, exit 4', async () => {
  const r = await runSvc(['inspect', '999', '--json'], env);
  expect(r.code, r.stderr).toBe(4);
  expect(JSON.parse(r.stdout)).toEqual({ error: 'execution 999 not found', status: 404, detail: 'execution 999 not found' });
});

it('every line keeps its columns, a child\'s end among them', async () => {
  const id = await s.run('cli/inspect-cols/parent', {});
  await until('the parent ends', async () => (await http(s.url, 'GET', `/api/executions/${id}`)).body.status === 'completed', 20_000);
  const r = await runSvc(['inspect', String(id)], env);
  expect(r.code, r.stderr).toBe(0);
  const lines = r.stdout.split('\n').filter((l) => l.includes(' active: '));
  expect(lines.find((l) => l.startsWith('child.finished seq 1 completed'))).toBeDefined();
  // Where the state starts (after the last space before it) and where `active:` does.
  const columns = lines.map((l) => [l.split(' ')[0], l.slice(0, l.indexOf(' active: ')).trimEnd().lastIndexOf(' '), l.indexOf(' active: ')]);
  const first = columns[0];
  expect(columns, r.stdout).toEqual(columns.map(([event]) => [event, first[1], first[2]]));
});
