// A YAML 1.1 merge key (`<<: *defaults`) is an ordinary key in YAML 1.2, which documents are read
// as: a task written with one was refused for the fields the merge was to bring ('kind: is
// required', 'unknown field <<'), never naming the `<<`. It is now named, with its line.
import { describe, expect, it } from 'vitest';
import { parseMcpServer } from '../../../src/dsl/parse-mcp-server.ts';
import { parsePlaybook } from '../../../src/dsl/parse-playbook.ts';

const PLAYBOOK = `apiVersion: svc/v1
kind: Playbook
metadata: { name: merged, path: t/merged }
workload:
  defaults: &shell { kind: shell, command: "echo hi" }
workflow:
  - step: start
    tool:
      - name: a
        <<: *shell
`;

describe('merge keys', () => {
  it('a playbook: the problem names the merge key and where it is, nothing else', () => {
    const r = parsePlaybook(PLAYBOOK);
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.problems).toEqual([{ path: 'workflow[0].tool[0]["<<"]', message: expect.stringMatching(/^'<<' \(YAML 1\.1's merge key\) is not read/), line: 10, column: expect.any(Number) }]);
  });

  it('an alias standing for a whole value still works, and a key "<<" holding text is left to the schema', () => {
    expect(parsePlaybook(PLAYBOOK.replace('        <<: *shell', '        kind: shell\n        command: "echo hi"')).ok).toBe(true);
    const text = parsePlaybook(PLAYBOOK.replace('<<: *shell', '"<<": text'));
    expect(text.ok).toBe(false);
    if (!text.ok) expect(text.problems.some((p) => /merge key/.test(p.message))).toBe(false);
  });

  it('an MCP server document too', () => {
    const r = parseMcpServer(`apiVersion: svc/v1
kind: Mcp
metadata: { name: m }
base: &b { transport: http }
spec:
  <<: *b
  endpoint: http://127.0.0.1:1/mcp
`);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.problems).toEqual([expect.objectContaining({ path: 'spec["<<"]', message: expect.stringMatching(/merge key/), line: 6 })]);
  });
});
