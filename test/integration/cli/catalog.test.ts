// `svc catalog register FILE...` as a person and a program use it: registered, unchanged, a
// refused file's problems at file:line:col, warnings, --json, and the exit codes.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runSvc } from '../../helpers/process.ts';
import { startTestStack, type TestStack } from '../../helpers/stack.ts';

let s: TestStack;
let dir: string;
beforeAll(async () => {
  s = await startTestStack();
  dir = await mkdtemp(join(tmpdir(), 'svc-catalog-cli-'));
});
afterAll(async () => {
  await s?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const GOOD = `apiVersion: svc/v1
kind: Playbook
metadata: { name: good, path: cli/catalog/good }
workflow:
  - step: start
    tool: { name: say, kind: shell, command: "echo hi" }
`;
// The same playbook at another path with a misspelt field.
const BAD = GOOD.replace('name: good, path: cli/catalog/good', 'name: bad, path: cli/catalog/bad').replace('command:', 'comand:');

describe('svc catalog register', () => {
  it('registers, then says unchanged; a refused file shows its problem at file:line:col and exits 1', async () => {
    const good = join(dir, 'good.yaml');
    const bad = join(dir, 'bad.yaml');
    await writeFile(good, GOOD);
    await writeFile(bad, BAD);
    const env = { SVC_SERVER_URL: s.url };

    const first = await runSvc(['catalog', 'register', good], env);
    expect(first, first.stderr).toMatchObject({ code: 0 });
    expect(first.stdout).toBe(`registered cli/catalog/good version 1 from ${good}\n`);

    const again = await runSvc(['catalog', 'register', good, bad], env);
    expect(again.code).toBe(1);
    expect(again.stdout).toBe(`cli/catalog/good version 1 unchanged (${good})\n`);
    expect(again.stderr).toMatch(new RegExp(`^${bad.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:6:\\d+: workflow\\[0\\]\\.tool\\.comand: unknown field 'comand'.*did you mean 'command'`, 'm'));

    const json = await runSvc(['catalog', 'register', '--json', good], env);
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toMatchObject({ file: good, path: 'cli/catalog/good', version: 1, unchanged: true });
    // A refused file's line is {file, error, problems}, each problem placed (as the usage says).
    const refused = await runSvc(['catalog', 'register', '--json', bad], env);
    expect(refused.code).toBe(1);
    const line = JSON.parse(refused.stdout);
    expect(line).toMatchObject({ file: bad, error: expect.any(String) });
    expect(line.problems).toContainEqual(expect.objectContaining({ path: 'workflow[0].tool.comand', line: 6, column: expect.any(Number) }));
  });

  it('usage errors exit 2; an unreachable server exits 3', async () => {
    // Each names what is wrong before the usage: a bare usage left a person to guess.
    const none = await runSvc(['catalog'], {});
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/^svc catalog: a subcommand is required \(register\)\nusage: svc catalog register /);
    const unknown = await runSvc(['catalog', 'list'], {});
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/^svc catalog: unknown subcommand 'list' \(register\)\nusage: /);
    const noFile = await runSvc(['catalog', 'register'], {});
    expect(noFile.code).toBe(2);
    expect(noFile.stderr).toMatch(/^svc catalog: register needs at least one FILE\nusage: /);
    const good = join(dir, 'good2.yaml');
    await writeFile(good, GOOD);
    expect((await runSvc(['catalog', 'register', good], { SVC_SERVER_URL: 'http://127.0.0.1:1' })).code).toBe(3);
  });
});
