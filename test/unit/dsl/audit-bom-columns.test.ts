// A file saved with a byte order mark (Windows editors do) starts with U+FEFF, which no editor
// shows or counts as a column. Problems on the first line were placed one column to the right of
// where they are (apiVersion at 1:2); the lines after it were right.
import { expect, it } from 'vitest';
import { parsePlaybook } from '../../../src/dsl/parse-playbook.ts';

const places = (text: string) => {
  const r = parsePlaybook(text);
  return r.ok ? [] : r.problems.map((p) => `${p.line}:${p.column} ${p.path}`);
};

it('places problems on a first line behind a byte order mark where an editor shows them', () => {
  const body = 'apiVersion: svc/v2\nkind: Playbook\nmetadata: {name: a, path: t/bom}\nworkflow:\n  - step: start\n    tool: {kind: shell, command: "{{ a + }}"}\n';
  expect(places(`\uFEFF${body}`)).toEqual(places(body));
  expect(places(`\uFEFF${body}`)).toEqual(['1:1 apiVersion', '6:42 workflow[0].tool.command']);
  const first = 'workflow: [{step: start, tool: {kind: shell, command: "{{ a + }}"}}]\napiVersion: svc/v1\nkind: Playbook\nmetadata: {name: a, path: t/bom}\n';
  expect(places(`\uFEFF${first}`)).toEqual(['1:63 workflow[0].tool.command']);
});
