import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { http } from '../../helpers/http.ts';

// GET /api/catalog/playbooks lists the newest version of every path (its OpenAPI summary), and
// `versions` is how many the path has. With ?kind= it used to filter the rows before choosing the
// newest, so a path whose newest version is a plain playbook was listed as an agent (an older
// version), which POST /api/execute then refuses (404), and `versions` counted that kind's only.

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => t?.close());

const doc = (echo: string) => `apiVersion: svc/v1
kind: Playbook
metadata: { name: turned, path: audit/turned }
workflow:
  - step: start
    tool: { name: a, kind: shell, command: "echo ${echo}" }
`;

type Listed = { path: string; version: number; kind: string; versions: number };
const listed = async (query: string): Promise<Listed[]> => (await http(t.url, 'GET', `/api/catalog/playbooks${query}`)).body.playbooks;

describe('GET /api/catalog/playbooks?kind=', () => {
  it('lists a path under the kind of its newest version only, with every version counted', async () => {
    expect((await http(t.url, 'POST', '/api/catalog/register', { content: doc('1'), resource_type: 'agent' })).body).toMatchObject({ version: 1, kind: 'agent' });
    expect((await http(t.url, 'POST', '/api/catalog/register', { content: doc('2'), resource_type: 'agent' })).body).toMatchObject({ version: 2, kind: 'agent' });
    expect((await http(t.url, 'POST', '/api/catalog/register', { content: doc('3') })).body).toMatchObject({ version: 3, kind: 'playbook' });

    // The newest version is a plain playbook: the path no longer runs as an agent...
    expect((await http(t.url, 'POST', '/api/execute', { path: 'audit/turned', resource_kind: 'agent' })).status).toBe(404);
    // ...so it is no agent in the list, and it is the playbook with its three versions.
    expect((await listed('?kind=agent')).map((p) => p.path)).not.toContain('audit/turned');
    const entry = { path: 'audit/turned', version: 3, kind: 'playbook', versions: 3 };
    expect((await listed('?kind=playbook')).find((p) => p.path === 'audit/turned')).toMatchObject(entry);
    expect((await listed('')).find((p) => p.path === 'audit/turned')).toMatchObject(entry);
  });

  it('counts every version of an agent path, whatever kind the older ones were', async () => {
    const agent = doc('a').replaceAll('turned', 'became');
    await http(t.url, 'POST', '/api/catalog/register', { content: agent });
    await http(t.url, 'POST', '/api/catalog/register', { content: agent.replace('echo a', 'echo b'), resource_type: 'agent' });
    expect((await listed('?kind=agent')).find((p) => p.path === 'audit/became')).toMatchObject({ version: 2, kind: 'agent', versions: 2 });
  });
});
