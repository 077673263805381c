// Over-long strings in a body: each is refused naming its field, with an answer of a bounded size
// that does not quote the value whole, and nothing stored.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';

let t: TestApp;
const LONG = 'a'.repeat(200_000);
// Far above any message the API composes, far below the value sent.
const MAX_ANSWER_BYTES = 2048;

async function rowCounts(): Promise<number[]> {
  const out: number[] = [];
  for (const table of ['credential', 'execution', 'event']) out.push((await t.deps.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM core.${table}`)).rows[0].n);
  return out;
}

beforeAll(async () => {
  t = await startTestApp();
  const made = await fetch(`${t.url}/api/credentials`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: 'kept_auth', type: 'custom', data: {} }) });
  expect(made.status).toBe(201);
});
afterAll(async () => t?.close());

describe('an over-long string in a body', () => {
  const cases: { name: string; method: string; path: string; body: unknown; status: number; names: string }[] = [
    // Was a 404 "credential 'aaaa…' not found" quoting all 200,000 characters: no credential has a name over 200.
    { name: 'a SQL credential_name over 200 characters', method: 'POST', path: '/api/postgres/execute', body: { query: 'SELECT 1', credential_name: 'c'.repeat(201) }, status: 422, names: 'credential_name' },
    // Was a 400 "unknown credential type 'aaaa…'" quoting all 200,000 characters.
    { name: 'a 200,000-character credential type', method: 'POST', path: '/api/credentials', body: { name: 'long_type', type: LONG, data: {} }, status: 400, names: 'unknown credential type' },
    { name: 'a 200,000-character credential type in a replace', method: 'PUT', path: '/api/credentials/kept_auth', body: { type: LONG, data: {} }, status: 400, names: 'unknown credential type' },
    { name: 'a 200,000-character SQL credential_name', method: 'POST', path: '/api/postgres/execute', body: { query: 'SELECT 1', credential_name: LONG }, status: 422, names: 'credential_name' },
  ];

  it.each(cases)('$name: $status naming $names, a short answer, nothing stored', async (c) => {
    const before = await rowCounts();
    const res = await fetch(t.url + c.path, { method: c.method, headers: { 'content-type': 'application/json' }, body: JSON.stringify(c.body) });
    const text = await res.text();
    expect(res.status, text.slice(0, 300)).toBe(c.status);
    expect(text).toContain(c.names);
    expect(Buffer.byteLength(text)).toBeLessThan(MAX_ANSWER_BYTES);
    expect(await rowCounts()).toEqual(before);
  });
});
