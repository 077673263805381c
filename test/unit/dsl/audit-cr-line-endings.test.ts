// YAML takes a lone carriage return as a line break (classic Mac OS files; js-yaml reads them so,
// and marks its syntax errors by those lines), but the places of every other problem counted only
// line feeds: a CR-only file's unknown field at line 6 was placed at 1:116.
import { expect, it } from 'vitest';
import { parsePlaybook } from '../../../src/dsl/parse-playbook.ts';

const places = (text: string) => {
  const r = parsePlaybook(text);
  return r.ok ? [] : r.problems.map((p) => `${p.line}:${p.column} ${p.path}`);
};

it('places problems in a file whose lines end in CR, CRLF or LF alike', () => {
  const lines = ['apiVersion: svc/v1', 'kind: Playbook', 'metadata: {name: a, path: t/cr}', 'workflow:', '  - step: start', '    tool: {kind: noop, comand: x}', '  - step: b', '    tool:', '      kind: shell', '      command: |', '        echo one', '        echo {{ x + }}', ''];
  const expected = ['6:24 workflow[0].tool.comand', '12:21 workflow[1].tool.command'];
  expect(places(lines.join('\n'))).toEqual(expected);
  expect(places(lines.join('\r\n'))).toEqual(expected);
  expect(places(lines.join('\r'))).toEqual(expected);
});
