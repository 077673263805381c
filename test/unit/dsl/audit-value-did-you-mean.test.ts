// A misspelt value of a field that takes a few (a task's kind, a loop's mode, a keychain entry's
// scope, the document's kind), filter or test names the one meant, as a misspelt field does.
import { expect, it } from 'vitest';
import { parsePlaybook } from '../../../src/dsl/parse-playbook.ts';

const messages = (text: string): string[] => {
  const r = parsePlaybook(text);
  return r.ok ? [] : r.problems.map((p) => `${p.path}: ${p.message}`);
};

it("a misspelt value gets 'did you mean'; a value close to none does not", () => {
  expect(
    messages(`apiVersion: svc/v1
kind: Playbok
metadata: { name: x, path: t/x }
keychain:
  - { name: api, kind: oauth2, scope: globl, auth: api_auth }
workflow:
  - step: start
    loop: { in: "{{ [1] }}", iterator: i, mode: paralel }
    tool: { name: a, kind: shel, command: "echo" }
    next: other
  - step: other
    tool: { name: b, kind: zzzzzzzz }
`),
  ).toEqual([
    'kind: must be one of "Playbook", got "Playbok" (did you mean \'Playbook\'?)',
    'keychain[0].scope: must be one of "global" | "local" | "shared", got "globl" (did you mean \'global\'?)',
    'workflow[0].tool.kind: must be one of "http" | "postgres" | "playbook" | "mcp" | "shell" | "noop", got "shel" (did you mean \'shell\'?)',
    'workflow[0].loop.mode: must be one of "sequential" | "parallel", got "paralel" (did you mean \'parallel\'?)',
    'workflow[1].tool.kind: must be one of "http" | "postgres" | "playbook" | "mcp" | "shell" | "noop", got "zzzzzzzz"',
  ]);
});

it("a misspelt filter or test gets 'did you mean'; one close to none does not", () => {
  expect(
    messages(`apiVersion: svc/v1
kind: Playbook
metadata: { name: x, path: t/x }
workflow:
  - step: start
    tool:
      - { name: a, kind: shell, command: "echo {{ workload.n | defualt(1) }}" }
      - { name: b, kind: shell, command: "echo {{ 1 if workload.n is defnied else 0 }}" }
      - { name: c, kind: shell, command: "echo {{ workload.n | zzzzzzzz }}" }
`),
  ).toEqual([
    "workflow[0].tool[0].command: unknown filter 'defualt' (did you mean 'default'?) (line 1, column 22)",
    "workflow[0].tool[1].command: unknown test 'defnied' (did you mean 'defined'?) (line 1, column 28)",
    "workflow[0].tool[2].command: unknown filter 'zzzzzzzz' (line 1, column 22)",
  ]);
});

it('a secret_manager entry without a provider the worker reads, or without a map, is a problem', () => {
  expect(
    messages(`apiVersion: svc/v1
kind: Playbook
metadata: { name: x, path: t/x }
keychain:
  - { name: a, kind: secret_manager, provider: gpc, map: { x: y } }
  - { name: b, kind: secret_manager, auth: x_auth }
  - { name: c, kind: secret_manager, provider: "{{ workload.p | default('gcp') }}", map: {} }
  - { name: d, kind: secret_manager, provider: Amazon, map: { x: y } }
workflow: [ { step: start } ]
`),
  ).toEqual([
    "keychain[0].provider: must be one of gcp, aws, azure (or google, gcp_secret_manager, amazon, aws_secrets_manager, azure_key_vault), got 'gpc' (did you mean 'gcp'?)",
    'keychain[1].provider: is required for a secret_manager entry (one of gcp, aws, azure)',
    'keychain[1].map: is required for a secret_manager entry: the fields to read, each a secret path',
    'keychain[2].map: is required for a secret_manager entry: the fields to read, each a secret path',
  ]);
});

it("a misspelt input type gets 'did you mean' too (its message is the inputs schema's own)", () => {
  expect(
    messages(`apiVersion: svc/v1
kind: Playbook
metadata: { name: x, path: t/x }
inputs:
  flag: { type: boolen }
  other: { type: zzzzzzzz }
workflow:
  - step: start
    tool: { name: a, kind: noop }
`),
  ).toEqual([
    "inputs.flag.type: must be one of string, integer, boolean, number, array, object (did you mean 'boolean'?)",
    'inputs.other.type: must be one of string, integer, boolean, number, array, object',
  ]);
});
