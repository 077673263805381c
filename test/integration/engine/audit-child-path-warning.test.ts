// A `playbook` task whose literal path names no playbook in the catalog (a typo, or a child not
// registered yet) was registered without a word, and every run of it failed `not_found`; one
// naming an MCP server document too. Registration now warns of both, at the task's path (it still
// stores the playbook: the child may be registered after its parent). A registered child, the
// playbook itself and a templated path warn nothing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestStack, type TestStack } from '../../helpers/stack.ts';
import { http } from '../../helpers/http.ts';

let s: TestStack;
beforeAll(async () => {
  s = await startTestStack({ workers: 0 });
});
afterAll(async () => s?.close());

const parent = (path: string, child: string) => `apiVersion: svc/v1
kind: Playbook
metadata: { name: parent, path: ${path} }
workload: { kid: audit/kids/real }
workflow:
  - step: start
    tool: { name: kid, kind: playbook, path: "${child}" }
`;

async function warningsOf(yaml: string): Promise<string[]> {
  const r = await http(s.url, 'POST', '/api/catalog/playbook', { content: yaml });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body.warnings;
}

describe("a playbook task's literal path", () => {
  it('warns when no playbook is there, where every run of the task fails not_found', async () => {
    const warnings = await warningsOf(parent('audit/kids/typo-parent', 'audit/kids/rael'));
    expect(warnings).toEqual(['workflow[0].tool.path: no playbook at audit/kids/rael in the catalog yet: until one is registered there, this task fails (not_found)']);
    const done = await s.wait(await s.run('audit/kids/typo-parent'));
    expect(done.error).toMatchObject({ code: 'not_found', step: 'start' });
  });

  it('warns when an MCP server document is there', async () => {
    const mcp = await http(s.url, 'POST', '/api/catalog/register', { content: 'apiVersion: svc/v1\nkind: Mcp\nmetadata: { name: kids-mcp, path: audit/kids/mcp }\nendpoint: http://127.0.0.1:9/mcp\n', resource_type: 'mcp' });
    expect(mcp.status, JSON.stringify(mcp.body)).toBe(201);
    expect(await warningsOf(parent('audit/kids/mcp-parent', 'audit/kids/mcp'))).toEqual([
      'workflow[0].tool.path: audit/kids/mcp is an MCP server document (kind Mcp), not a playbook: this task fails (not_found)',
    ]);
  });

  it('warns nothing for a registered child, the playbook itself or a templated path', async () => {
    await s.register('apiVersion: svc/v1\nkind: Playbook\nmetadata: { name: real, path: audit/kids/real }\nworkflow:\n  - step: only\n');
    expect(await warningsOf(parent('audit/kids/good-parent', 'audit/kids/real'))).toEqual([]);
    expect(await warningsOf(parent('audit/kids/templated-parent', '{{ workload.kid }}'))).toEqual([]);
    const self = `apiVersion: svc/v1
kind: Playbook
metadata: { name: self, path: audit/kids/self }
workflow:
  - step: start
    next:
      - { step: again, when: "{{ execution.parent_id is none }}" }
  - step: again
    tool: { name: kid, kind: playbook, path: audit/kids/self }
`;
    expect(await warningsOf(self)).toEqual([]);
  });
});
