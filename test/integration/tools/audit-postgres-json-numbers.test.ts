// A json or jsonb value's numbers were read with JSON.parse: an id past 2^53 in a jsonb column
// came back rounded (9007199254740993 as 9007199254740992, then stored as that wrong text), and a
// fraction of more digits than a double holds lost them, silently, where a bigint or numeric
// column of the same value is kept exact (docs/playbook-dsl.md, "Values of SQL results"). A json
// number is now kept by the same rule: a number where it reads back as the very value, else its text.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { postgres } from '../../../src/worker/tools/postgres.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/database.ts';

let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(async () => database?.drop());

const run = (command: string) =>
  postgres({ name: 't', kind: 'postgres', command }, { signal: new AbortController().signal, env: {}, credential: { name: 'db', type: 'postgres', data: { connection_string: database.url } } });

it('keeps json and jsonb numbers exact: past 2^53 or past a double\'s digits as their text', async () => {
  const doc = '{"id": 9007199254740993, "neg": -12345678901234567890, "small": 42, "price": 10.50, "pi": 3.14159265358979323846, "tiny": 1e-7, "huge": 1e400, "list": [9007199254740993, 1.5]}';
  const outcome = await run(`SELECT '${doc}'::jsonb AS b, '${doc}'::json AS j, ARRAY['${doc}'::jsonb, NULL] AS bs, '[9007199254740993]'::json AS top`);
  // jsonb holds the number as numeric, which prints no exponent.
  const hugeB = `1${'0'.repeat(400)}`;
  const exact = { id: '9007199254740993', neg: '-12345678901234567890', small: 42, price: 10.5, pi: '3.14159265358979323846', tiny: 1e-7, list: ['9007199254740993', 1.5] };
  expect(outcome).toMatchObject({ status: 'ok', data: { rows: [{ b: { ...exact, huge: hugeB }, j: { ...exact, huge: '1e400' }, bs: [{ ...exact, huge: hugeB }, null], top: ['9007199254740993'] }] } });
});

it('leaves other json values as JSON.parse reads them', async () => {
  const outcome = await run(`SELECT '{"a": "9007199254740993", "b": true, "c": null, "d": [0, -0, 2.5e3]}'::jsonb AS b, '"text"'::json AS s`);
  expect(outcome).toMatchObject({ status: 'ok', data: { rows: [{ b: { a: '9007199254740993', b: true, c: null, d: [0, 0, 2500] }, s: 'text' }] } });
});
