// The two start routes, POST /api/run/playbook and POST /api/execute, share one rule: an agent
// starts only with resource_kind agent (422 on either route otherwise), the newest catalog version
// decides what a path is, and workload.access_token never reaches the event log on either route.
// Catalog paths with an empty, `.` or `..` segment are refused where they are registered and
// wherever a route takes one.
import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { http } from '../../helpers/http.ts';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => t?.close());

const TOKEN = 'RUNPB_AGENTTOKEN_SECRET_654';
const agentYaml = readFileSync(new URL('../../../examples/agents/mcp-agent.yaml', import.meta.url), 'utf8');
const hello = (path: string) => `apiVersion: svc/v1
kind: Playbook
metadata: { name: hello, path: ${path} }
workflow:
  - step: start
    tool: { name: a, kind: noop }
`;

async function register(content: string, resourceType = 'playbook') {
  const r = await http(t.url, 'POST', '/api/catalog/register', { content, resource_type: resourceType });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body as { catalog_id: number; version: number; kind: string };
}

/** Every row of the event log, commands and snapshots that holds `text`. */
async function rowsHolding(text: string): Promise<number> {
  const { rows } = await t.deps.db.query<{ n: number }>(
    `SELECT (SELECT count(*) FROM core.event e WHERE e::text LIKE $1)::int + (SELECT count(*) FROM core.command c WHERE c::text LIKE $1)::int AS n`,
    [`%${text}%`],
  );
  return rows[0].n;
}

/** A GET with the path sent as written: fetch would resolve its dot segments first. */
function rawGet(path: string): Promise<{ status: number; body: { detail?: unknown } }> {
  const { hostname, port } = new URL(t.url);
  return new Promise((resolve, reject) => {
    request({ hostname, port, path, method: 'GET' }, (res) => {
      let text = '';
      res.on('data', (c) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) }));
    })
      .on('error', reject)
      .end();
  });
}

describe('starting an agent', () => {
  beforeAll(async () => {
    await register(agentYaml, 'agent');
  });

  it('is refused on /api/run/playbook as on /api/execute without resource_kind agent (422), and starts nothing', async () => {
    const body = { path: 'agents/mcp', payload: { method: 'tools/list', access_token: TOKEN } };
    const run = await http(t.url, 'POST', '/api/run/playbook', body);
    expect(run.status).toBe(422);
    expect(run.body.detail.errors).toEqual(['resource_kind: required for agent playbooks']);
    const execute = await http(t.url, 'POST', '/api/execute', { path: 'agents/mcp', workload: { access_token: TOKEN } });
    expect(execute.status).toBe(422);
    expect(execute.body.detail.errors).toEqual(['resource_kind: required for agent playbooks']);
    // A given version of an agent is refused too.
    const versioned = await http(t.url, 'POST', '/api/run/playbook', { ...body, version: 1 });
    expect(versioned.status).toBe(422);
    const listed = await http(t.url, 'GET', '/api/executions?path=agents/mcp');
    expect(listed.body.count).toBe(0);
    expect(await rowsHolding(TOKEN)).toBe(0);
  });

  it('a playbook marked metadata.agent but registered as a playbook is an agent too', async () => {
    await register(agentYaml.replace('\n  path: agents/mcp\n', '\n  path: agents/marked\n'));
    const r = await http(t.url, 'POST', '/api/run/playbook', { path: 'agents/marked' });
    expect(r.status).toBe(422);
  });

  it('keeps access_token out of the event log on both routes: a handle stands in', async () => {
    await register(hello('plain/hello'));
    const run = await http(t.url, 'POST', '/api/run/playbook', { path: 'plain/hello', payload: { access_token: TOKEN } });
    expect(run.status, JSON.stringify(run.body)).toBe(200);
    const execute = await http(t.url, 'POST', '/api/execute', { path: 'agents/mcp', resource_kind: 'agent', workload: { method: 'tools/list', access_token: TOKEN } });
    expect(execute.status, JSON.stringify(execute.body)).toBe(200);
    for (const id of [run.body.execution_id, execute.body.execution_id]) {
      const events = await http(t.url, 'GET', `/api/events/${id}`);
      expect(events.status).toBe(200);
      const text = JSON.stringify(events.body);
      expect(text).toContain('execution.started');
      expect(text).toMatch(/"access_token":"svc-secret:[0-9a-f-]{36}"/);
      expect(text).not.toContain(TOKEN);
    }
    expect(await rowsHolding(TOKEN)).toBe(0);
  });
});

describe('the newest version decides', () => {
  it('an agent re-registered as a playbook is no longer started as an agent (404), and runs as a playbook', async () => {
    const asAgent = await register(hello('examples/hello'), 'agent');
    const asPlaybook = await register(hello('examples/hello'));
    expect(asPlaybook.version).toBe(asAgent.version + 1);
    const agent = await http(t.url, 'POST', '/api/execute', { path: 'examples/hello', resource_kind: 'agent', workload: {} });
    expect(agent.status).toBe(404);
    expect(agent.body.detail).toBe('Executable catalog entry not found');
    const playbook = await http(t.url, 'POST', '/api/execute', { path: 'examples/hello', workload: {} });
    expect(playbook.status, JSON.stringify(playbook.body)).toBe(200);
    expect(playbook.body).toMatchObject({ catalog_id: asPlaybook.catalog_id, resource_kind: 'playbook' });
    expect((await http(t.url, 'POST', '/api/run/playbook', { path: 'examples/hello' })).body.catalog_id).toBe(asPlaybook.catalog_id);
  });

  it('a playbook re-registered as an agent starts only as one', async () => {
    await register(hello('examples/again'));
    const asAgent = await register(hello('examples/again'), 'agent');
    expect((await http(t.url, 'POST', '/api/execute', { path: 'examples/again', workload: {} })).status).toBe(422);
    expect((await http(t.url, 'POST', '/api/run/playbook', { path: 'examples/again' })).status).toBe(422);
    const agent = await http(t.url, 'POST', '/api/execute', { path: 'examples/again', resource_kind: 'agent', workload: {} });
    expect(agent.status, JSON.stringify(agent.body)).toBe(200);
    expect(agent.body.catalog_id).toBe(asAgent.catalog_id);
  });
});

describe('catalog paths with an empty, . or .. segment', () => {
  it('are refused at registration, naming metadata.path or path (400)', async () => {
    for (const path of ['../etc', 'a/../b', 'a/./b', '.', '..', 'a/..']) {
      const r = await http(t.url, 'POST', '/api/catalog/register', { content: hello(JSON.stringify(path)) });
      expect(r.status, path).toBe(400);
      expect(r.body.detail.problems, path).toEqual([expect.objectContaining({ path: 'metadata.path' })]);
      const given = await http(t.url, 'POST', '/api/catalog/playbook', { content: hello('ok/path'), path });
      expect(given.status, path).toBe(422);
      expect(JSON.stringify(given.body.detail), path).toContain('path');
    }
    const mcp = await http(t.url, 'POST', '/api/catalog/register', { resource_type: 'mcp', content: 'apiVersion: svc/v1\nkind: Mcp\nmetadata: { name: x, path: "mcp/../x" }\nendpoint: http://127.0.0.1:1/mcp\n' });
    expect(mcp.status).toBe(400);
    expect((await http(t.url, 'GET', '/api/catalog/playbooks')).body.playbooks.map((p: { path: string }) => p.path)).not.toContainEqual(expect.stringContaining('.'));
  });

  it('are refused in a route\'s path, naming it (422)', async () => {
    for (const path of ['../etc', 'a/../b', 'a//b', './x']) {
      for (const route of ['/api/run/playbook', '/api/execute']) {
        const r = await http(t.url, 'POST', route, { path });
        expect(r.status, `${route} ${path}`).toBe(422);
        expect(JSON.stringify(r.body.detail), `${route} ${path}`).toContain('path');
      }
    }
    for (const raw of ['/api/catalog/playbook/../etc', '/api/catalog/playbook/a/../b/versions', '/api/catalog/playbook/a/./b/statechart', '/api/catalog/playbook/a/%2e%2e/b']) {
      const r = await rawGet(raw);
      expect(r.status, raw).toBe(422);
      expect(JSON.stringify(r.body.detail), raw).toContain('path');
    }
    // A name holding dots is still a name.
    await register(hello('dots/v1.2..3'));
    expect((await http(t.url, 'GET', '/api/catalog/playbook/dots/v1.2..3')).status).toBe(200);
  });
});
