// PostgreSQL continues a string that a `'` follows at once or past a line break: `E'a'\n'b'` is
// one E'' string, whose backslashes escape in every part. A postgres task's template output was
// written as a plain '' literal there (its `\` not doubled), and a literal `'` after the line
// break was read as opening a plain string: a payload `\` then escaped the string's closing
// quote, and the next template's output, meant as a literal, ran as SQL (a UNION reading another
// table). A continued part is now read and written in the mode of the string it continues, and a
// COPY … PROGRAM command stays refused across its parts.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { renderSqlCommand } from '../../../src/dsl/render.ts';
import { postgres } from '../../../src/worker/tools/postgres.ts';
import { http } from '../../helpers/http.ts';
import { startTestStack, type TestStack } from '../../helpers/stack.ts';

const SECRET = 'sk-live-continuation-0123';
// A payload that ends an E'' string's part with a backslash, and one that is SQL if it escapes.
const BACKSLASH = '\\';
const UNION = ` UNION SELECT token FROM public.api_keys --`;

let stack: TestStack;
beforeAll(async () => {
  stack = await startTestStack();
  const created = await http(stack.url, 'POST', '/api/credentials', { name: 'db_auth', type: 'postgres', data: { connection_string: stack.databaseUrl } });
  expect(created.status).toBe(201);
  const admin = new pg.Client({ connectionString: stack.databaseUrl });
  await admin.connect();
  await admin.query(`CREATE TABLE public.reports (owner text, name text); INSERT INTO public.reports VALUES ('ann', 'q3');
    CREATE TABLE public.api_keys (token text); INSERT INTO public.api_keys VALUES ('${SECRET}')`);
  await admin.end();
}, 60_000);
afterAll(async () => stack?.close());

describe('a template output in a string PostgreSQL continues', () => {
  it('stays data in a report whose E string goes on past a line break', async () => {
    await stack.register(`apiVersion: svc/v1
kind: Playbook
metadata: { name: report, path: audit/report_heading }
workflow:
  - step: start
    tool:
      - name: q
        kind: postgres
        auth: db_auth
        command: |
          SELECT E'Report for\\t'
                 '{{ workload.title }}' AS heading, name
          FROM public.reports WHERE owner = '{{ workload.owner }}'
`);
    const plain = await stack.wait(await stack.run('audit/report_heading', { title: 'Q3', owner: 'ann' }));
    expect(plain).toMatchObject({ status: 'completed', result: { rows: [{ heading: 'Report for\tQ3', name: 'q3' }] } });

    const hostile = await stack.wait(await stack.run('audit/report_heading', { title: BACKSLASH, owner: UNION }));
    expect(JSON.stringify(hostile)).not.toContain(SECRET);
    expect(hostile).toMatchObject({ status: 'completed', result: { rows: [], row_count: 0 } });
  });

  it('comes back as it is wherever PostgreSQL continues the string it follows', async () => {
    const credential = { name: 'db_auth', type: 'postgres', data: { connection_string: stack.databaseUrl } };
    const run = (command: string) => postgres({ name: 't', kind: 'postgres', command }, { signal: new AbortController().signal, env: {}, credential });
    const templates = [
      `SELECT E'a'{{ v }} AS first, '{{ w }}' AS second`,
      `SELECT E'a'\n{{ v }} AS first, '{{ w }}' AS second`,
      `SELECT E'a' -- a comment\n  '{{ v }}' AS first, '{{ w }}' AS second`,
      `SELECT E'a'\n'b'\n'{{ v }}' AS first, '{{ w }}' AS second`,
      `SELECT 'a'\n{{ v }}\n'{{ v }}' AS first, '{{ w }}' AS second`,
    ];
    for (const template of templates) {
      const command = renderSqlCommand(template, { v: BACKSLASH, w: UNION }, 'start.t.command');
      const outcome = await run(command);
      expect(outcome, command).toMatchObject({ status: 'ok', data: { row_count: 1 } });
      const row = (outcome.data as { rows: Record<string, unknown>[] }).rows[0];
      expect(row.second, command).toBe(UNION);
      expect(String(row.first).endsWith(BACKSLASH), command).toBe(true);
    }
  });

  it('is still refused in the command of COPY … PROGRAM continued past a line break', () => {
    for (const template of ["COPY t FROM PROGRAM 'cat '\n'{{ v }}'", "COPY t FROM PROGRAM 'cat '\n{{ v }}"]) {
      expect(() => renderSqlCommand(template, { v: 'x; id' }, 'start.t.command'), template).toThrow(/the command of COPY … PROGRAM/);
    }
  });
});
