// A numeric (or bigint) reads as a number where it reads back as the very value
// (docs/playbook-dsl.md, "Values of SQL results"), but one below 1e-6 came back as its text:
// 0.0000001 as "0.0000001", since JavaScript prints 1e-7 with an exponent and the digits were
// compared as printed. It is now a number, as 0.000001 always was; one a double cannot hold stays text.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { postgres } from '../../../src/worker/tools/postgres.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/database.ts';

let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(async () => database?.drop());

it('reads a small numeric as a number when a double holds it exactly', async () => {
  const outcome = await postgres(
    { name: 't', kind: 'postgres', command: 'SELECT 0.0000001::numeric AS a, -0.00000012345::numeric(20,15) AS b, 0.000001::numeric AS c, ARRAY[0.00000005, NULL]::numeric[] AS d, 0.00000010000000000000000001::numeric AS e' },
    { signal: new AbortController().signal, env: {}, credential: { name: 'db', type: 'postgres', data: { connection_string: database.url } } },
  );
  expect(outcome).toMatchObject({ status: 'ok', data: { rows: [{ a: 1e-7, b: -1.2345e-7, c: 0.000001, d: [5e-8, null], e: '0.00000010000000000000000001' }] } });
});
