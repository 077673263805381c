import { describe, expect, it } from 'vitest';
import { parseMcpServer } from '../../../src/dsl/parse-mcp-server.ts';

// An MCP server document (POST /api/catalog/register, resource_type mcp) is refused as a playbook
// is: every problem with its line and column, an unknown field with "did you mean".
const doc = (body: string) => `apiVersion: svc/v1\nkind: Mcp\nmetadata: { name: tools }\n${body}`;

describe('parseMcpServer', () => {
  it('a misspelt field is unknown, with did you mean, and the missing one is required, each at its line', () => {
    const r = parseMcpServer(doc('endpont: http://127.0.0.1:8931/mcp\n'));
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.problems).toEqual([
      { path: 'endpoint', message: 'is required', line: 1, column: 1 },
      { path: 'endpont', message: "unknown field 'endpont' (did you mean 'endpoint'?)", line: 4, column: 1 },
    ]);
  });

  it('a YAML error and a bad value carry their place', () => {
    const yaml = parseMcpServer('a: [\n');
    expect(yaml.ok ? [] : yaml.problems).toEqual([{ path: '$', message: expect.stringContaining('YAML syntax error'), line: 2, column: 1 }]);
    const key = parseMcpServer('endpoint: http://x\nheaders:\n  [a]: b\n');
    expect(key.ok ? [] : key.problems).toEqual([{ path: '$', message: expect.stringContaining('complex keys'), line: 3, column: 3 }]);
    const url = parseMcpServer(doc('endpoint: ftp://x\n'));
    expect(url.ok ? [] : url.problems).toEqual([{ path: 'endpoint', message: 'must be an http(s) URL', line: 4, column: 1 }]);
  });

  it("refuses .inf and .nan in its config, which its stored JSON cannot hold, as a playbook's are", () => {
    const r = parseMcpServer(doc('endpoint: http://127.0.0.1:8931/mcp\nconfig: { port: .inf }\n'));
    expect(r.ok ? [] : r.problems).toEqual([{ path: 'config.port', message: expect.stringContaining('not a finite number'), line: 5, column: 11 }]);
  });

  it('takes the apiVersion a playbook takes, svc/v1, and refuses another at its line', () => {
    const r = parseMcpServer('apiVersion: foo/v9\nkind: Mcp\nmetadata: { name: tools }\nendpoint: http://127.0.0.1:8931/mcp\n');
    expect(r.ok ? [] : r.problems).toEqual([{ path: 'apiVersion', message: 'unknown apiVersion "foo/v9": this service knows svc/v1', line: 1, column: 1 }]);
  });

  it('a document with its fields right parses', () => {
    expect(parseMcpServer(doc('endpoint: http://127.0.0.1:8931/mcp\ntransport: sse\n')).ok).toBe(true);
  });
});
