// Long-lived answers check their caller again while they last (SVC_AUTH=token, a real server and
// PostgreSQL, real WebSocket and SSE clients): the inspection WebSocket and a batch's status
// stream used to be checked only when they opened, so a token revoked or expired meanwhile kept
// reading for as long as the execution waited (days, for an approval). Now the WebSocket closes
// with 1008 naming why, and the event stream ends with a `: closed: <why>` line, within the token
// lookup's period and one check.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type WebSocket from 'ws';
import { API_TOKEN_CACHE_TTL_MS } from '../../../src/api/api-token-cache.ts';
import { STREAM_CALLER_CHECK_MS } from '../../../src/api/auth.ts';
import { newApiToken } from '../../../src/auth/api-token.ts';
import { insertApiToken, revokeApiToken } from '../../../src/db/api-token.repo.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { asWorker, bearer, createApiToken } from '../../helpers/auth.ts';
import { commandReport, noopPlaybook } from '../../helpers/batch.ts';
import { http } from '../../helpers/http.ts';
import { openSocket, readEventStream, stillOpen, type Closed } from '../../helpers/stream-readers.ts';

// A revoked token's lookup may be trusted a whole period more, then the next check sees it.
const REVOKED_WITHIN_MS = API_TOKEN_CACHE_TTL_MS + STREAM_CALLER_CHECK_MS + 1_500;

let t: TestApp;
let admin: string;
let executionId: number;
let requestId: string;

beforeAll(async () => {
  // No workers and no batch processors: the execution stays running, its batch accepted.
  t = await startTestApp({ SVC_AUTH: 'token', SVC_BATCH_STATUS_STREAM_POLL_SECONDS: '0.1' }, { batchProcessors: false });
  admin = await createApiToken(t.deps.db, 'admin', 'admin');
  expect((await http(t.url, 'POST', '/api/catalog/playbook', { content: noopPlaybook('lapse/two', 2) }, bearer(admin))).status).toBe(201);
  const run = await http(t.url, 'POST', '/api/run/playbook', { path: 'lapse/two' }, bearer(admin));
  expect(run.status).toBe(200);
  executionId = run.body.execution_id;
  const cmd = await t.deps.db.query<{ command_id: string }>('SELECT command_id FROM core.command WHERE execution_id = $1', [executionId]);
  const claimed = await http(t.url, 'POST', `/api/commands/${cmd.rows[0].command_id}/claim`, { worker_id: 'w1' }, asWorker);
  expect(claimed.status).toBe(200);
  const batch = await http(t.url, 'POST', '/api/events/batch', { execution_id: executionId, worker_id: 'w1', events: commandReport(claimed.body) }, asWorker);
  expect(batch.status).toBe(202);
  requestId = batch.body.request_id;
}, 60_000);
afterAll(async () => t?.close());


/** Opens the inspection stream with `token`; resolves once its first message came, with how it closes later. */
function openInspection(token: string): Promise<{ closed: Promise<Closed>; ws: WebSocket }> {
  return openSocket(`${t.url}/api/executions/${executionId}/inspect`, bearer(token));
}

/** Opens the batch's status stream with `token`: its text as it grows, and when it ended. */
async function openStatusStream(token: string): Promise<{ text: () => string; ended: Promise<number> }> {
  const res = await fetch(`${t.url}/api/events/batch/${requestId}/stream`, { headers: bearer(token) });
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
  return readEventStream(res);
}

describe('the inspection WebSocket', () => {
  it('keeps streaming to a live token, and closes with 1008 once the token is revoked', async () => {
    const token = await createApiToken(t.deps.db, 'ws-revoked', 'viewer');
    const { closed } = await openInspection(token);
    // Checked several times meanwhile, and still served.
    expect(await stillOpen(closed, 3 * STREAM_CALLER_CHECK_MS + 500)).toBe(true);
    await revokeApiToken(t.deps.db, 'ws-revoked');
    const revokedAt = Date.now();
    const end = await closed;
    expect(end.code).toBe(1008);
    expect(end.reason).toBe('the API token is unknown or revoked');
    expect(end.at - revokedAt).toBeLessThan(REVOKED_WITHIN_MS);
  });

  it('closes with 1008 naming the expiry once the token expires, within a check', async () => {
    const made = newApiToken();
    const row = await insertApiToken(t.deps.db, { name: 'ws-brief', role: 'viewer', hash: made.hash, prefix: made.prefix, expires: { inMs: 2_500 } });
    const expiresAt = row!.expires_at!.getTime();
    const { closed } = await openInspection(made.token);
    const end = await closed;
    expect(end.code).toBe(1008);
    expect(end.reason).toBe(`the API token expired at ${new Date(expiresAt).toISOString()}`);
    expect(end.at).toBeGreaterThanOrEqual(expiresAt - 50);
    expect(end.at - expiresAt).toBeLessThan(STREAM_CALLER_CHECK_MS + 1_500);
  });
});

describe("a batch's status stream", () => {
  it('keeps streaming to a live token, and ends with a `: closed:` line once the token is revoked', async () => {
    const token = await createApiToken(t.deps.db, 'sse-revoked', 'viewer');
    const stream = await openStatusStream(token);
    expect(await stillOpen(stream.ended, 3 * STREAM_CALLER_CHECK_MS + 500)).toBe(true);
    expect(stream.text()).toMatch(/^id: 1\nevent: status\ndata: \{.*"state":"accepted"/);
    await revokeApiToken(t.deps.db, 'sse-revoked');
    const revokedAt = Date.now();
    const endedAt = await stream.ended;
    expect(endedAt - revokedAt).toBeLessThan(REVOKED_WITHIN_MS);
    expect(stream.text().endsWith(': closed: the API token is unknown or revoked\n\n')).toBe(true);
  });

  it('ends once the token expires', async () => {
    const made = newApiToken();
    const row = await insertApiToken(t.deps.db, { name: 'sse-brief', role: 'viewer', hash: made.hash, prefix: made.prefix, expires: { inMs: 2_500 } });
    const expiresAt = row!.expires_at!.getTime();
    const stream = await openStatusStream(made.token);
    const endedAt = await stream.ended;
    expect(endedAt - expiresAt).toBeLessThan(STREAM_CALLER_CHECK_MS + 1_500);
    expect(stream.text()).toMatch(/: closed: the API token expired at \S+\n\n$/);
  });

  it('is not cut for the worker token, which cannot lapse', async () => {
    const stream = await openStatusStream(asWorker.authorization.slice('Bearer '.length));
    expect(await stillOpen(stream.ended, 2 * STREAM_CALLER_CHECK_MS + 500)).toBe(true);
  });
});
