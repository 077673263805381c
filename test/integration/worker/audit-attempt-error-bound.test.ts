// Issue 29 item 1: every attempt of a retried task is an event "with its error (bounded, secrets
// masked)". Output was capped at SVC_TASK_OUTPUT_BYTES, the error's message was not: a postgres
// task whose statement failed with a 300,000-character message (RAISE, or a value quoted by
// "invalid input syntax") stored it whole in each call.attempt, again in call.error, twice in
// command.failed and once more in step.exit, workflow.failed and playbook.failed (~2.4 MB for three
// attempts). The message is now cut (whole characters, `…` at the cut) to that same limit in UTF-8
// bytes, after masking, so a secret in it stays masked.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { http, type Json } from '../../helpers/http.ts';
import { startTestStack, type TestStack } from '../../helpers/stack.ts';

const LIMIT = 64 * 1024; // the in-process worker's default SVC_TASK_OUTPUT_BYTES

let s: TestStack;
// The test database's password: the credential's secret, which the worker masks.
let password: string;
beforeAll(async () => {
  s = await startTestStack({ workers: 1 });
  const url = new URL(s.databaseUrl);
  password = decodeURIComponent(url.password);
  expect(password.length).toBeGreaterThan(5);
  const data = { host: url.hostname, port: Number(url.port), user: decodeURIComponent(url.username), password, database: url.pathname.slice(1) };
  expect((await http(s.url, 'POST', '/api/credentials', { name: 'bound_db', type: 'postgres', data })).status).toBe(201);
}, 120_000);
afterAll(async () => s?.close());

it("a retried task's error message is bounded in every event, masked before it is cut", async () => {
  // The message: the credential's password (a secret), then 40,000 'é' (2 bytes each: the cut falls among them) and 300,000 'E'.
  await s.register(`
apiVersion: svc/v1
metadata: { name: loud, path: audit/loud_error }
workflow:
  - step: start
    tool:
      name: q
      kind: postgres
      auth: bound_db
      command: "DO $$ BEGIN RAISE EXCEPTION '% %', '${password}', repeat('é', 40000) || repeat('E', 300000); END $$"
      retry: { attempts: 3, delay_seconds: 0.05 }
`);
  const id = await s.run('audit/loud_error');
  const final = await s.wait(id);
  expect(final, JSON.stringify(final.error).slice(0, 400)).toMatchObject({ status: "failed", error: { code: "sql_error" } });
  const events = (await s.events(id)) as Json[];
  expect(events.filter((e) => e.event_type === 'call.attempt')).toHaveLength(2);
  for (const e of events) {
    const text = JSON.stringify(e);
    expect(text).not.toContain(password);
    // The largest event, command.failed, holds the message twice (its error and the task's).
    expect(Buffer.byteLength(text), `${e.event_type} is ${Buffer.byteLength(text)} bytes`).toBeLessThan(2 * LIMIT + 4096);
  }
  const attempt = events.find((e) => e.event_type === 'call.attempt')!;
  const message = String(attempt.error.message);
  expect(message).toMatch(/^\*+ éééé/); // masked first, then cut
  expect(message.endsWith('…')).toBe(true);
  expect(message.isWellFormed()).toBe(true);
  expect(Buffer.byteLength(message)).toBeLessThanOrEqual(LIMIT);
  expect(Buffer.byteLength(message)).toBeGreaterThan(LIMIT - 8);
  expect(attempt.error.code).toBe('sql_error');
  // The execution's own error and the step route say the same, bounded.
  expect(Buffer.byteLength(String(final.error.message))).toBeLessThanOrEqual(LIMIT);
  const r = await http(s.url, 'GET', `/api/executions/${id}/steps/start`);
  expect(r.status).toBe(200);
  const attempts = r.body.runs[0].tasks[0].attempts as Json[];
  expect(attempts.map((a) => a.status)).toEqual(['error', 'error', 'error']);
  for (const a of attempts) expect(Buffer.byteLength(String(a.error.message))).toBeLessThanOrEqual(LIMIT);
}, 60_000);
