// A refusal exits by its HTTP status in every client command, as docs/cli.md's table says: 4 not
// found, 5 conflict, 6 not allowed. svc list, status, cancel, limits (and inspect) did; svc run,
// triggers, cleanup, agent, mcp and events send exited 1 for all three, so a script that reads
// 6 as "renew the token" missed it when its token lapsed under svc run.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { bearer, createApiToken } from '../../helpers/auth.ts';
import { http } from '../../helpers/http.ts';
import { runSvc } from '../../helpers/process.ts';

let t: TestApp;
let admin: string;
let viewer: string;
const dir = mkdtempSync(join(tmpdir(), 'svc-refusal-exit-'));
const batch = join(dir, 'batch.json');
const playbookFile = join(dir, 'p.yaml');

beforeAll(async () => {
  t = await startTestApp({ SVC_AUTH: 'token' });
  admin = await createApiToken(t.deps.db, 'exit-admin', 'admin');
  viewer = await createApiToken(t.deps.db, 'exit-viewer', 'viewer');
  const playbook = 'apiVersion: svc/v1\nmetadata: { name: g, path: cli/exit/g }\ntriggers:\n  - { name: nightly, kind: schedule, cron: "@daily" }\nworkflow:\n  - step: only\n    tool: { name: t, kind: noop }\n';
  expect((await http(t.url, 'POST', '/api/catalog/playbook', { content: playbook }, bearer(admin))).status).toBe(201);
  writeFileSync(batch, JSON.stringify({ execution_id: 1, worker_id: 'w1', events: [] }));
  writeFileSync(playbookFile, playbook.replace('cli/exit/g', 'cli/exit/file'));
});
afterAll(async () => t?.close());

const cases: Array<[string, string[], 'bad' | 'viewer' | 'admin', number, number]> = [
  ['a revoked or unknown token', ['run', 'cli/exit/g'], 'bad', 401, 6],
  ['a role too low', ['run', 'cli/exit/g'], 'viewer', 403, 6],
  ['no such playbook', ['run', 'cli/exit/none'], 'admin', 404, 4],
  ['a revoked or unknown token', ['triggers'], 'bad', 401, 6],
  ['no such trigger', ['triggers', 'pause', 'cli/exit/g', 'nope'], 'admin', 404, 4],
  ['a role too low', ['triggers', 'pause', 'cli/exit/g', 'nightly'], 'viewer', 403, 6],
  ['a role too low', ['cleanup'], 'viewer', 403, 6],
  ['a revoked or unknown token', ['agent'], 'bad', 401, 6],
  ['no such agent', ['agent', 'run', 'cli/exit/none'], 'admin', 404, 4],
  ['a revoked or unknown token', ['mcp'], 'bad', 401, 6],
  ['no such MCP server', ['mcp', 'status', 'nope'], 'admin', 404, 4],
  ['a revoked or unknown token', ['events', 'send', batch], 'bad', 401, 6],
];

describe('a refusal exits by its status, as svc status does', () => {
  it.each(cases)('%s: svc %j', async (_what, args, who, status, code) => {
    const token = who === 'bad' ? 'svc_not-a-token' : who === 'viewer' ? viewer : admin;
    const r = await runSvc([...args, '--json'], { SVC_SERVER_URL: t.url, SVC_API_TOKEN: token });
    expect(JSON.parse(r.stdout)).toMatchObject({ status });
    expect(r.code, r.stderr).toBe(code);
  });

  // Not the file's fault: every other file would meet the same, so it stops there (as a server
  // not serving now does, exit 3), nothing registered; it exited 1, as for a file the server refused.
  it.each([
    ['a revoked or unknown token', 'bad'],
    ['a role too low', 'viewer'],
  ] as const)('svc catalog register with %s: 6, and it stops at the first file', async (_what, who) => {
    const r = await runSvc(['catalog', 'register', playbookFile, playbookFile, '--json'], { SVC_SERVER_URL: t.url, SVC_API_TOKEN: who === 'bad' ? 'svc_not-a-token' : viewer });
    expect(r.code, r.stderr).toBe(6);
    expect(r.stdout.trim().split('\n').map((line) => JSON.parse(line))).toEqual([expect.objectContaining({ file: playbookFile, status: who === 'bad' ? 401 : 403 })]);
    expect((await http(t.url, 'GET', '/api/catalog/playbook/cli/exit/file', undefined, bearer(admin))).status).toBe(404);
  });

  it('svc status alike (the table every command now keeps)', async () => {
    const r = await runSvc(['status', '99'], { SVC_SERVER_URL: t.url, SVC_API_TOKEN: 'svc_not-a-token' });
    expect(r.code).toBe(6);
  });
});
