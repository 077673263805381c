// An Mcp document is never started (docs/agents.md). POST /api/execute answers the spec's row for
// a path "not registered under the right kind", 404 `Executable catalog entry not found`, with or
// without resource_kind agent; POST /api/run/playbook (by path or version) answers 422 naming it
// an MCP server document. Nothing starts either way.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { http } from '../../helpers/http.ts';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
  const r = await http(t.url, 'POST', '/api/catalog/register', { resource_type: 'mcp', content: 'apiVersion: svc/v1\nkind: Mcp\nmetadata: { name: demo }\nendpoint: http://127.0.0.1:9/mcp\n' });
  if (r.status !== 201) throw new Error(`register: ${r.status} ${JSON.stringify(r.body)}`);
});
afterAll(async () => t?.close());

describe('starting an Mcp document', () => {
  it('POST /api/execute: 404 Executable catalog entry not found, as either kind', async () => {
    for (const body of [{ path: 'mcp/demo' }, { path: 'mcp/demo', resource_kind: 'agent' }, { path: 'mcp/demo', resource_kind: 'playbook' }]) {
      const r = await http(t.url, 'POST', '/api/execute', body);
      expect(r.status, JSON.stringify(body)).toBe(404);
      expect(r.body.detail).toBe('Executable catalog entry not found');
    }
  });

  it('POST /api/run/playbook: 422 naming it an MCP server document, by path or version; nothing started', async () => {
    for (const body of [{ path: 'mcp/demo' }, { path: 'mcp/demo', version: 1 }]) {
      const r = await http(t.url, 'POST', '/api/run/playbook', body);
      expect(r.status, JSON.stringify(body)).toBe(422);
      expect(JSON.stringify(r.body.detail)).toContain('mcp/demo is an MCP server document (kind Mcp), not a playbook');
    }
    expect((await http(t.url, 'GET', '/api/executions?path=mcp/demo')).body.count).toBe(0);
  });
});
