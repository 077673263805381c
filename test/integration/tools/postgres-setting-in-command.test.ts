// A template's output in a postgres task's command is written as a literal that relies on
// standard_conforming_strings being on (a `\` in '' is an ordinary character). The command itself
// may set it off (`SET`, `SET LOCAL`, set_config(), `backslash_quote`, `RESET ALL`): that cannot
// undo the literals, because PostgreSQL reads the whole text of a query before it runs any of its
// statements, and the task's session is its own (nothing runs after the command on it). So such a
// command is not refused; this pins that it stays safe, should the tool ever run a command's
// statements one by one.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { renderSqlCommand } from '../../../src/dsl/render.ts';
import { postgres } from '../../../src/worker/tools/postgres.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/database.ts';

const SECRET = 'sk-live-setting-4711';
// With standard_conforming_strings off, `\'` would escape the quote that ends the literal and
// the rest would run as SQL.
const HOSTILE = `\\' UNION SELECT token FROM public.api_keys --`;

let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase();
  const admin = new pg.Client({ connectionString: database.url });
  await admin.connect();
  await admin.query(`CREATE TABLE public.reports (owner text); INSERT INTO public.reports VALUES ('ann');
    CREATE TABLE public.api_keys (token text); INSERT INTO public.api_keys VALUES ('${SECRET}')`);
  await admin.end();
}, 60_000);
afterAll(async () => database?.drop());

describe('a command that turns standard_conforming_strings off before a template', () => {
  it.each([
    `SET standard_conforming_strings = off; SELECT owner FROM public.reports WHERE owner = '{{ v }}'`,
    `SET standard_conforming_strings TO off;\nSELECT owner FROM public.reports WHERE owner = {{ v }}`,
    `SELECT set_config('standard_conforming_strings', 'off', false); SELECT owner FROM public.reports WHERE owner = '{{ v }}'`,
    `BEGIN; SET LOCAL standard_conforming_strings = off; SELECT owner FROM public.reports WHERE owner = '{{ v }}'; COMMIT`,
    `SET standard_conforming_strings = off; SET backslash_quote = on; SELECT owner FROM public.reports WHERE owner = '{{ v }}'`,
    `SET standard_conforming_strings = off; RESET ALL; SELECT owner FROM public.reports WHERE owner = 'x{{ v }}'`,
  ])('keeps the output data: %s', async (template) => {
    const command = renderSqlCommand(template, { v: HOSTILE }, 'start.t.command');
    const credential = { name: 'db_auth', type: 'postgres', data: { connection_string: database.url } };
    const outcome = await postgres({ name: 't', kind: 'postgres', command }, { signal: new AbortController().signal, env: {}, credential });
    expect(JSON.stringify(outcome), command).not.toContain(SECRET);
    expect(outcome, command).toMatchObject({ status: 'ok', data: { rows: [] } });
  });

  it('does not carry the setting to the next task: each has its own session', async () => {
    const credential = { name: 'db_auth', type: 'postgres', data: { connection_string: database.url } };
    const run = (command: string) => postgres({ name: 't', kind: 'postgres', command }, { signal: new AbortController().signal, env: {}, credential });
    expect(await run('SET standard_conforming_strings = off')).toMatchObject({ status: 'ok' });
    expect(await run('SHOW standard_conforming_strings')).toMatchObject({ status: 'ok', data: { rows: [{ standard_conforming_strings: 'on' }] } });
  });
});
