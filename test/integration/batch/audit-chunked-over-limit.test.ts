// A batch body over SVC_BATCH_MAX_BYTES is refused with 413 naming the limit whether or not the
// client declared its length. Sent chunked (no Content-Length: a client streaming its events) it
// was answered fastify's 'request body is too large', naming neither the bytes allowed nor the
// setting, where the same body with a Content-Length named both.
import { afterAll, beforeAll, expect, it } from 'vitest';
import pg from 'pg';
import { asWorker } from '../../helpers/auth.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';

const MAX_BYTES = 4096;
let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ SVC_BATCH_MAX_BYTES: String(MAX_BYTES) });
});
afterAll(async () => {
  await t?.close();
});

/** POSTs `text` as one chunk of a chunked body (no Content-Length). */
async function postChunked(path: string, text: string): Promise<{ status: number; body: { detail: unknown } }> {
  const body = new ReadableStream({
    start(c) {
      c.enqueue(new TextEncoder().encode(text));
      c.close();
    },
  });
  const res = await fetch(t.url + path, { method: 'POST', headers: { ...asWorker, 'content-type': 'application/json' }, body, duplex: 'half' } as RequestInit);
  return { status: res.status, body: (await res.json()) as { detail: unknown } };
}

it('names SVC_BATCH_MAX_BYTES and the bytes allowed for a chunked body over it, storing nothing', async () => {
  const events = [{ event_type: 'command.heartbeat', command_id: 1, attempt: 1, context: { pad: 'x'.repeat(MAX_BYTES) } }];
  const res = await postChunked('/api/events/batch', JSON.stringify({ execution_id: 1, worker_id: 'w1', events }));
  expect(res.status).toBe(413);
  // Before: 'request body is too large'.
  expect(res.body.detail).toBe(`the batch body is longer than ${MAX_BYTES} bytes, the most SVC_BATCH_MAX_BYTES allows`);
  const db = new pg.Client({ connectionString: t.databaseUrl });
  await db.connect();
  try {
    expect((await db.query('SELECT count(*)::int AS n FROM core.batch_request')).rows[0].n).toBe(0);
  } finally {
    await db.end();
  }
});

it("names the bytes allowed for another route's chunked body over its limit", async () => {
  const res = await postChunked('/api/catalog/playbook', JSON.stringify({ content: 'x'.repeat(9 * 1024 * 1024) }));
  expect(res.status).toBe(413);
  expect(res.body.detail).toBe(`request body is too large: at most ${8 * 1024 * 1024} bytes`);
});
