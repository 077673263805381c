// A quoted string that PostgreSQL runs as code took a postgres task's template output as data: in
// `DO 'BEGIN RAISE NOTICE ''{{ x }}''; END'` the output's quotes were doubled once, for the outer
// literal, and were plain quotes again when the body ran, so a payload `'; DELETE FROM victims;
// RAISE NOTICE '` deleted the table. Templates were refused only in dollar-quoted bodies. A DO
// block's quoted body and a function's or procedure's `AS '…'` are now code, as COPY … PROGRAM's
// command is a shell's: an output there (or between tokens where it would become such a string)
// is refused before anything runs, and the same command outside such a string still works.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { renderSqlCommand } from '../../../src/dsl/render.ts';
import { http } from '../../helpers/http.ts';
import { startTestStack, type TestStack } from '../../helpers/stack.ts';

const PAYLOAD = `'; DELETE FROM public.victims; RAISE NOTICE '`;

let stack: TestStack;
let admin: pg.Client;
beforeAll(async () => {
  stack = await startTestStack();
  const created = await http(stack.url, 'POST', '/api/credentials', { name: 'db_auth', type: 'postgres', data: { connection_string: stack.databaseUrl } });
  expect(created.status).toBe(201);
  admin = new pg.Client({ connectionString: stack.databaseUrl });
  await admin.connect();
  await admin.query(`CREATE TABLE public.victims (name text); INSERT INTO public.victims VALUES ('ann'), ('bob')`);
}, 60_000);
afterAll(async () => {
  await admin?.end();
  await stack?.close();
});

const victims = async () => (await admin.query<{ n: number }>('SELECT count(*)::int AS n FROM public.victims')).rows[0].n;

const playbook = (path: string, command: string) => `apiVersion: svc/v1
kind: Playbook
metadata: { name: code_strings, path: ${path} }
workload: { note: hello }
workflow:
  - step: start
    tool:
      - name: q
        kind: postgres
        auth: db_auth
        command: ${JSON.stringify(command)}
`;

describe('a template output in a quoted string PostgreSQL runs as code', () => {
  it('is refused in a DO block and changes nothing; the block without it runs', async () => {
    await stack.register(playbook('audit/do_body', "DO 'BEGIN RAISE NOTICE ''{{ workload.note }}''; END'"));
    const hostile = await stack.wait(await stack.run('audit/do_body', { note: PAYLOAD }));
    expect(hostile.status).toBe('failed');
    expect(JSON.stringify(hostile)).toMatch(/quoted body of a DO block/);
    expect(await victims()).toBe(2);

    await stack.register(playbook('audit/do_plain', "DO 'BEGIN RAISE NOTICE ''fixed''; END'; SELECT '{{ workload.note }}' AS note"));
    const plain = await stack.wait(await stack.run('audit/do_plain', { note: PAYLOAD }));
    expect(plain).toMatchObject({ status: 'completed' });
    expect(JSON.stringify(plain)).toContain('DELETE FROM public.victims');
    expect(await victims()).toBe(2);
  });

  it("is refused in a function's or procedure's quoted body, in every spelling", () => {
    const refused = [
      "DO LANGUAGE plpgsql 'BEGIN RAISE NOTICE ''{{ v }}''; END'",
      "DO E'BEGIN RAISE NOTICE ''{{ v }}''; END'",
      "do'BEGIN {{ v }} END'",
      'DO {{ v }}',
      "DO 'BEGIN NULL; END'\n'{{ v }}'",
      "CREATE FUNCTION f() RETURNS text AS 'SELECT ''{{ v }}''' LANGUAGE sql",
      "create or replace procedure p() as 'select {{ v }}' language sql",
      'CREATE FUNCTION f() RETURNS text AS {{ v }} LANGUAGE sql',
    ];
    for (const template of refused) expect(() => renderSqlCommand(template, { v: PAYLOAD }, 'start.q.command'), template).toThrow(/PostgreSQL runs that string as code/);
    // Data where it is data: after the statement, in other statements' AS and DO, in a table named function.
    const kept = [
      "DO 'BEGIN NULL; END'; SELECT '{{ v }}'",
      "CREATE TABLE function AS SELECT '{{ v }}' AS v",
      "INSERT INTO t VALUES ('a') ON CONFLICT DO UPDATE SET v = '{{ v }}'",
      "CREATE RULE r AS ON INSERT TO t DO ALSO SELECT '{{ v }}'",
      "CREATE FUNCTION f(a text DEFAULT '{{ v }}') RETURNS text AS 'SELECT a' LANGUAGE sql",
    ];
    for (const template of kept) expect(renderSqlCommand(template, { v: PAYLOAD }, 'start.q.command'), template).toContain(PAYLOAD.replaceAll("'", "''"));
  });

  it('runs a function made without templates in its body, given data in a template outside it', async () => {
    await stack.register(
      playbook(
        'audit/function_body',
        "CREATE OR REPLACE FUNCTION pg_temp.greet(who text) RETURNS text AS 'SELECT ''hi '' || who' LANGUAGE sql; SELECT pg_temp.greet('{{ workload.note }}') AS greeting",
      ),
    );
    const done = await stack.wait(await stack.run('audit/function_body', { note: PAYLOAD }));
    expect(done).toMatchObject({ status: 'completed', result: { rows: [{ greeting: `hi ${PAYLOAD}` }] } });
    expect(await victims()).toBe(2);
  });
});
