import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { executionApi } from '../../helpers/execution-api.ts';
import { http } from '../../helpers/http.ts';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => t?.close());

const doc = (name: string, body: string) => `apiVersion: svc/v1
kind: Playbook
metadata: { name: ${name}, path: cat/${name} }
${body}`;

const good = doc('good', `workflow:
  - step: start
    tool: { name: a, kind: shell, command: "echo 1" }
    next: end
  - step: end
    tool: { name: b, kind: noop }
`);

async function count(): Promise<number> {
  return (await http(t.url, 'GET', '/api/catalog/playbooks')).body.count;
}

describe('catalog', () => {
  it('round-trips a playbook, versions per path, returns the newest or ?version=N', async () => {
    const a = await http(t.url, 'POST', '/api/catalog/playbook', { content: good });
    expect(a.status).toBe(201);
    expect(a.body).toMatchObject({ status: 'success', path: 'cat/good', version: 1, kind: 'playbook' });
    const b = await http(t.url, 'POST', '/api/catalog/playbook', { content: good.replace('echo 1', 'echo 2') });
    expect(b.body.version).toBe(2);
    const newest = await http(t.url, 'GET', '/api/catalog/playbook/cat/good');
    expect(newest.status).toBe(200);
    expect(newest.body).toMatchObject({ path: 'cat/good', version: 2, kind: 'playbook', catalog_id: b.body.catalog_id });
    expect(newest.body.content).toContain('echo 2');
    expect(newest.body.created_at).toMatch(/Z$/);
    const v1 = await http(t.url, 'GET', '/api/catalog/playbook/cat/good?version=1');
    expect(v1.body.content).toContain('echo 1');
    expect((await http(t.url, 'GET', '/api/catalog/playbook/cat/good?version=9')).status).toBe(404);
    expect((await http(t.url, 'GET', '/api/catalog/playbook/cat/nope')).status).toBe(404);
    const list = await http(t.url, 'GET', '/api/catalog/playbooks');
    expect(list.body.playbooks.find((p: { path: string }) => p.path === 'cat/good')).toMatchObject({ version: 2, versions: 2, name: 'good' });
  });

  it('both registration routes answer the entry as GET does: catalog_id, path, version, kind, content, created_at', async () => {
    const content = good.replace('cat/good', 'cat/echoed');
    const get = async () => (await http(t.url, 'GET', '/api/catalog/playbook/cat/echoed')).body;
    const viaPlaybook = await http(t.url, 'POST', '/api/catalog/playbook', { content });
    expect(viaPlaybook.body).toMatchObject({ status: 'success', ...(await get()) });
    const viaRegister = await http(t.url, 'POST', '/api/catalog/register', { content: content.replace('echo 1', 'echo 2') });
    const newest = await get();
    expect(newest).toMatchObject({ version: 2, content: expect.stringContaining('echo 2'), created_at: expect.stringMatching(/Z$/) });
    expect(viaRegister.body).toMatchObject({ status: 'success', ...newest });
  });

  it('a body path wins over metadata.path; concurrent registrations get distinct versions', async () => {
    const r = await http(t.url, 'POST', '/api/catalog/playbook', { content: good, path: 'cat/elsewhere' });
    expect(r.body.path).toBe('cat/elsewhere');
    const all = await Promise.all(Array.from({ length: 8 }, (_, i) => http(t.url, 'POST', '/api/catalog/playbook', { content: good.replace('echo 1', `echo ${i}`), path: 'cat/race' })));
    expect(all.map((x) => x.body.version).sort((x, y) => x - y)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
  });

  it('a document without metadata.path registers at the body path (the spec\'s request: content and path) and runs there', async () => {
    const content = 'apiVersion: svc/v1\nkind: Playbook\nmetadata: { name: pathless }\nworkflow:\n  - step: start\n    tool: { name: a, kind: noop }\n';
    const r = await http(t.url, 'POST', '/api/catalog/playbook', { content, path: 'cat/pathless' });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    expect(r.body).toMatchObject({ status: 'success', path: 'cat/pathless', version: 1 });
    const run = await http(t.url, 'POST', '/api/run/playbook', { path: 'cat/pathless' });
    expect(run.status, JSON.stringify(run.body)).toBe(200);
    expect((await http(t.url, 'GET', `/api/executions/${run.body.execution_id}`)).body).toMatchObject({ path: 'cat/pathless' });
    // Without either, the document's metadata.path is what is missing, at its place.
    const neither = await http(t.url, 'POST', '/api/catalog/playbook', { content });
    expect(neither.status).toBe(400);
    expect(neither.body.detail.problems).toContainEqual(expect.objectContaining({ path: 'metadata.path', message: 'is required' }));
  });

  it('re-registering the newest content makes no version: both routes answer it with unchanged: true', async () => {
    const content = good.replace('cat/good', 'cat/same');
    const first = await http(t.url, 'POST', '/api/catalog/playbook', { content });
    expect(first.status).toBe(201);
    expect(first.body).toMatchObject({ version: 1, unchanged: false });
    const again = await http(t.url, 'POST', '/api/catalog/playbook', { content });
    expect(again.status).toBe(201);
    expect(again.body).toMatchObject({ version: 1, catalog_id: first.body.catalog_id, unchanged: true });
    const viaRegister = await http(t.url, 'POST', '/api/catalog/register', { content });
    expect(viaRegister.status).toBe(201);
    expect(viaRegister.body).toMatchObject({ version: 1, catalog_id: first.body.catalog_id, unchanged: true });
    // Another content makes version 2; the first content again is a change from it: version 3.
    expect((await http(t.url, 'POST', '/api/catalog/register', { content: content.replace('echo 1', 'echo 2') })).body).toMatchObject({ version: 2, unchanged: false });
    expect((await http(t.url, 'POST', '/api/catalog/playbook', { content })).body).toMatchObject({ version: 3, unchanged: false });
    expect((await http(t.url, 'GET', '/api/catalog/playbook/cat/same/versions')).body.versions).toHaveLength(3);
  });

  it("a registration's 201 carries a Location that reads back the version it answers, unchanged ones too", async () => {
    const content = good.replace('cat/good', 'cat/located');
    const first = await http(t.url, 'POST', '/api/catalog/playbook', { content });
    expect(first.headers.get('location')).toBe('/api/catalog/playbook/cat/located?version=1');
    const second = await http(t.url, 'POST', '/api/catalog/register', { content: content.replace('echo 1', 'echo 2') });
    expect(second.headers.get('location')).toBe('/api/catalog/playbook/cat/located?version=2');
    const same = await http(t.url, 'POST', '/api/catalog/playbook', { content, path: 'cat/located' });
    expect(same.body).toMatchObject({ version: 3, unchanged: false });
    const again = await http(t.url, 'POST', '/api/catalog/playbook', { content, path: 'cat/located' });
    expect(again.body.unchanged).toBe(true);
    expect(again.headers.get('location')).toBe('/api/catalog/playbook/cat/located?version=3');
    for (const r of [first, second, again]) {
      const read = await http(t.url, 'GET', r.headers.get('location')!);
      expect(read.status).toBe(200);
      expect(read.body).toEqual({ catalog_id: r.body.catalog_id, path: r.body.path, version: r.body.version, kind: r.body.kind, content: r.body.content, created_at: r.body.created_at });
    }
    const doc = (await http(t.url, 'GET', '/docs/json')).body;
    for (const route of ['/api/catalog/playbook', '/api/catalog/register']) expect(doc.paths[route].post.responses['201'].headers?.location?.schema, route).toEqual({ type: 'string' });
  });

  it('lists by kind, and refuses a kind no entry can have naming the kinds, not with an empty list', async () => {
    await http(t.url, 'POST', '/api/catalog/playbook', { content: good.replace('cat/good', 'cat/kinded') });
    const playbooks = await http(t.url, 'GET', '/api/catalog/playbooks?kind=playbook');
    expect(playbooks.body.playbooks.map((p: { kind: string }) => p.kind)).toEqual(expect.arrayContaining(['playbook']));
    expect(new Set(playbooks.body.playbooks.map((p: { kind: string }) => p.kind))).toEqual(new Set(['playbook']));
    for (const kind of ['agents', 'Playbook']) {
      const r = await http(t.url, 'GET', `/api/catalog/playbooks?kind=${kind}`);
      expect(r.status, kind).toBe(422);
      expect(r.body.detail.errors, kind).toEqual(['kind: must be one of playbook, agent, mcp']);
    }
    // Sent empty (a form's unset filter), it is no filter: every entry.
    const all = await http(t.url, 'GET', '/api/catalog/playbooks');
    expect((await http(t.url, 'GET', '/api/catalog/playbooks?kind=')).body).toEqual(all.body);
  });

  it('identical registrations at once make one version', async () => {
    const content = good.replace('cat/good', 'cat/twin');
    const all = await Promise.all(Array.from({ length: 6 }, (_, i) => http(t.url, 'POST', i % 2 ? '/api/catalog/register' : '/api/catalog/playbook', { content })));
    expect(all.map((r) => r.body.version)).toEqual([1, 1, 1, 1, 1, 1]);
    expect(all.filter((r) => r.body.unchanged === false)).toHaveLength(1);
    expect(new Set(all.map((r) => r.body.catalog_id)).size).toBe(1);
    expect((await http(t.url, 'GET', '/api/catalog/playbook/cat/twin/versions')).body.versions).toHaveLength(1);
  });

  it('lists the versions of a path with content hashes, and diffs two of them', async () => {
    const content = good.replace('cat/good', 'cat/hist');
    await http(t.url, 'POST', '/api/catalog/playbook', { content });
    await http(t.url, 'POST', '/api/catalog/playbook', { content: content.replace('echo 1', 'echo 2') });
    const r = await http(t.url, 'GET', '/api/catalog/playbook/cat/hist/versions');
    expect(r.status).toBe(200);
    expect(r.body.path).toBe('cat/hist');
    expect(r.body.versions.map((x: { version: number }) => x.version)).toEqual([2, 1]);
    const sha = createHash('sha256').update(content).digest('hex');
    expect(r.body.versions[1]).toMatchObject({ version: 1, kind: 'playbook', content_hash: sha });
    expect(r.body.versions[1].catalog_id).toEqual(expect.any(Number));
    expect(r.body.versions[1].created_at).toMatch(/Z$/);
    expect(r.body.versions[0].content_hash).not.toBe(sha);
    expect(r.body.diff).toBeUndefined();
    const d = await http(t.url, 'GET', '/api/catalog/playbook/cat/hist/versions?from=1&to=2');
    expect(d.status).toBe(200);
    expect(d.body.diff).toEqual({
      from: 1,
      to: 2,
      unified: [
        '--- cat/hist@1',
        '+++ cat/hist@2',
        '@@ -3,7 +3,7 @@',
        'metadata: { name: good, path: cat/hist }',
        'workflow:',
        '  - step: start',
        '-    tool: { name: a, kind: shell, command: "echo 1" }',
        '+    tool: { name: a, kind: shell, command: "echo 2" }',
        '    next: end',
        '  - step: end',
        '    tool: { name: b, kind: noop }',
        '',
      ].map((l, i) => (i > 2 && !l.startsWith('-') && !l.startsWith('+') && l !== '' ? ` ${l}` : l)).join('\n'),
    });
    expect((await http(t.url, 'GET', '/api/catalog/playbook/cat/hist/versions?from=1&to=1')).body.diff.unified).toBe('');
    expect((await http(t.url, 'GET', '/api/catalog/playbook/cat/hist/versions?from=1&to=9')).status).toBe(404);
    const half = await http(t.url, 'GET', '/api/catalog/playbook/cat/hist/versions?from=1');
    expect(half.status).toBe(400);
    expect(half.body.detail).toBe('to: a diff needs both ?from= and ?to=');
    expect((await http(t.url, 'GET', '/api/catalog/playbook/cat/hist/versions?to=2')).body.detail).toMatch(/^from: /);
    expect((await http(t.url, 'GET', '/api/catalog/playbook/cat/nothing/versions')).status).toBe(404);
    // A path ending in /versions could not be read back: refused.
    expect((await http(t.url, 'POST', '/api/catalog/playbook', { content, path: 'cat/x/versions' })).status).toBe(400);
  });

  it.each([
    ['malformed YAML', 'workflow: [ {step: a', /YAML syntax error/],
    ['a missing workflow', doc('nowf', 'workload: {}'), /workflow/],
    ['an unknown task kind', doc('kind', 'workflow:\n  - step: start\n    tool: { name: a, kind: teleport }'), /workflow\[0\]\.tool.*kind/],
    ['a duplicate step name', doc('dup', 'workflow:\n  - step: start\n    tool: { name: a, kind: noop }\n  - step: start\n    tool: { name: b, kind: noop }'), /workflow\[1\].*duplicate|duplicate.*start/i],
    ['an arc to a missing step', doc('arc', 'workflow:\n  - step: start\n    tool: { name: a, kind: noop }\n    next: nowhere'), /nowhere/],
  ])('refuses %s with 400 naming the problem, and stores nothing', async (_what, content, pattern) => {
    const before = await count();
    const r = await http(t.url, 'POST', '/api/catalog/playbook', { content, path: 'cat/bad' });
    expect(r.status).toBe(400);
    expect(r.body.detail.message).toBe('Playbook validation failed');
    expect(r.body.detail.errors.join('\n')).toMatch(pattern);
    expect(await count()).toBe(before);
  });

  it('lists every problem of a document at once', async () => {
    const r = await http(t.url, 'POST', '/api/catalog/playbook', {
      content: doc('many', 'workflow:\n  - step: start\n    tool: { name: a, kind: teleport }\n  - tool: { kind: shell }'),
      path: 'cat/many',
    });
    expect(r.status).toBe(400);
    expect(r.body.detail.errors.length).toBeGreaterThanOrEqual(2);
  });

  it('a metadata.path no route could reach is a problem at its line and column, as every problem is', async () => {
    const content = 'apiVersion: svc/v1\nkind: Playbook\nmetadata:\n  name: up\n  path: ../up\nworkflow:\n  - step: start\n';
    const r = await http(t.url, 'POST', '/api/catalog/playbook', { content });
    expect(r.status).toBe(400);
    expect(r.body.detail.problems).toEqual([{ path: 'metadata.path', message: expect.stringMatching(/^must be slash-separated names/), line: 5, column: 3 }]);
  });

  it('lists shape and cross-reference problems together: unknown kind, duplicate step, arc to a missing step', async () => {
    const content = doc('all', 'workflow:\n  - step: start\n    tool: { name: a, kind: teleport }\n    next: nowhere\n  - step: start\n    tool: { name: b, kind: noop }');
    const r = await http(t.url, 'POST', '/api/catalog/playbook', { content, path: 'cat/all' });
    expect(r.status).toBe(400);
    expect(r.body.detail.errors).toEqual([
      expect.stringMatching(/^workflow\[0\]\.tool\.kind: .*teleport/),
      "workflow[1].step: duplicate step name 'start' (first at workflow[0])",
      "workflow[0].next: arc to unknown step 'nowhere'",
    ]);
  });

  it('refuses a YAML alias bomb fast with 400 and stores nothing', async () => {
    const lines = ['workload:', '  l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]'];
    for (let i = 1; i <= 6; i++) lines.push(`  l${i}: &l${i} [${Array.from({ length: 10 }, () => `*l${i - 1}`).join(', ')}]`);
    const content = doc('bomb', `${lines.join('\n')}\nworkflow: [ { step: start, tool: { kind: noop } } ]\n`);
    expect(content.length).toBeLessThan(1_000);
    const before = await count();
    const t0 = performance.now();
    const r = await http(t.url, 'POST', '/api/catalog/playbook', { content, path: 'cat/bomb' });
    expect(performance.now() - t0).toBeLessThan(2_000);
    expect(r.status).toBe(400);
    expect(r.body.detail.errors).toEqual(['$: document expands to more than 100000 nodes (YAML aliases?)']);
    expect(await count()).toBe(before);
    expect((await http(t.url, 'GET', '/api/catalog/playbook/cat/bomb')).status).toBe(404);
  });

  it('an MCP server document has no statechart and is never started, by path or by version: 404 and 422, never a 500', async () => {
    const server = 'apiVersion: svc/v1\nkind: Mcp\nmetadata: { name: tools, path: cat/tools }\nendpoint: http://127.0.0.1:1/mcp\ntransport: streamable-http\n';
    expect((await http(t.url, 'POST', '/api/catalog/register', { content: server, resource_type: 'mcp' })).body).toMatchObject({ path: 'cat/tools', version: 1, kind: 'mcp' });
    for (const url of ['/api/catalog/playbook/cat/tools/statechart', '/api/catalog/playbook/cat/tools/statechart?version=1']) {
      const chart = await http(t.url, 'GET', url);
      expect(chart.status, url).toBe(404);
      expect(chart.body.detail, url).toMatch(/^cat\/tools (version 1 )?is an MCP server document \(kind Mcp\): it has no statechart$/);
    }
    for (const body of [{ path: 'cat/tools' }, { path: 'cat/tools', version: 1 }]) {
      const run = await http(t.url, 'POST', '/api/run/playbook', body);
      expect(run.status, JSON.stringify(body)).toBe(422);
      expect(JSON.stringify(run.body.detail), JSON.stringify(body)).toContain('cat/tools is an MCP server document (kind Mcp), not a playbook');
    }
    expect((await http(t.url, 'GET', '/api/executions?path=cat/tools')).body.count).toBe(0);
  });

  it("a playbook task naming an MCP server document fails its step (not_found), the start answering 200, never a 500", async () => {
    const server = 'apiVersion: svc/v1\nkind: Mcp\nmetadata: { name: tools2, path: cat/tools2 }\nendpoint: http://127.0.0.1:1/mcp\ntransport: streamable-http\n';
    expect((await http(t.url, 'POST', '/api/catalog/register', { content: server, resource_type: 'mcp' })).status).toBe(201);
    const parent = doc('parent', 'workflow:\n  - step: start\n    tool: { name: child, kind: playbook, path: cat/tools2 }\n');
    expect((await http(t.url, 'POST', '/api/catalog/playbook', { content: parent })).status).toBe(201);
    const run = await http(t.url, 'POST', '/api/run/playbook', { path: 'cat/parent' });
    expect(run.status, JSON.stringify(run.body)).toBe(200);
    const done = await executionApi(t.url).wait(run.body.execution_id);
    expect(done).toMatchObject({ status: 'failed', error: { code: 'not_found', message: expect.stringContaining('cat/tools2 is an MCP server document (kind Mcp), not a playbook') } });
    expect((await http(t.url, 'GET', '/api/executions?path=cat/tools2')).body.count).toBe(0);
  });

  it('registers an agent resource, which runs only as resource_kind agent', async () => {
    const agent = `apiVersion: svc/v1
kind: Playbook
metadata: { name: helper, path: agents/helper, agent: true, terminal: { visible: true, scopes: [ops] } }
workflow:
  - step: start
    tool: { name: a, kind: noop }
`;
    const r = await http(t.url, 'POST', '/api/catalog/register', { content: agent, resource_type: 'agent' });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ status: 'success', path: 'agents/helper', kind: 'agent' });
    expect((await http(t.url, 'GET', '/api/catalog/playbooks?kind=agent')).body.count).toBe(1);
    const without = await http(t.url, 'POST', '/api/execute', { path: 'agents/helper', workload: {} });
    expect(without.status).toBe(422);
    const ok = await http(t.url, 'POST', '/api/execute', { path: 'agents/helper', resource_kind: 'agent', workload: { tool: 'x' } });
    expect(ok.status).toBe(200);
    expect(ok.body.execution_id).toBeGreaterThan(0);
    const wrongKind = await http(t.url, 'POST', '/api/execute', { path: 'cat/good', resource_kind: 'agent', workload: {} });
    expect(wrongKind.status).toBe(404);
    expect(wrongKind.body.detail).toBe('Executable catalog entry not found');
    const invalid = await http(t.url, 'POST', '/api/execute', { resource_kind: 'agent' });
    expect(invalid.status).toBe(422);
  });

  it('an agent playbook registered as a plain playbook starts neither way, and its registration says so', async () => {
    const agent = `apiVersion: svc/v1
kind: Playbook
metadata: { name: stray, path: agents/stray, agent: true }
workflow:
  - step: start
    tool: { name: a, kind: noop }
`;
    const hint = expect.stringContaining('registered as a playbook: it starts only once registered as an agent');
    for (const [route, body] of [['/api/catalog/playbook', { content: agent }], ['/api/catalog/register', { content: agent }]] as const) {
      const r = await http(t.url, 'POST', route, body);
      expect(r.status, route).toBe(201);
      expect(r.body, route).toMatchObject({ kind: 'playbook', warnings: [hint] });
    }
    expect((await http(t.url, 'POST', '/api/execute', { path: 'agents/stray', resource_kind: 'agent' })).body.detail).toBe('Executable catalog entry not found');
    expect((await http(t.url, 'POST', '/api/execute', { path: 'agents/stray' })).status).toBe(422);
    const asAgent = await http(t.url, 'POST', '/api/catalog/register', { content: agent, resource_type: 'agent' });
    expect(asAgent.body).toMatchObject({ kind: 'agent', warnings: [] });
    expect((await http(t.url, 'POST', '/api/execute', { path: 'agents/stray', resource_kind: 'agent' })).status).toBe(200);
  });
});
