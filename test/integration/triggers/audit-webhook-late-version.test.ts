// A webhook delivery whose body is still arriving when a new version of its playbook changes the
// trigger: the trigger was read at the headers, and the delivery was checked and rendered against
// that old spec, then started on the new version's workflow. A secret rotated by a new version
// (`auth` naming another credential) still let through a delivery signed with the old one, opened
// before the registration and finished after it (a sender may take up to the request timeout).
// Real server, real PostgreSQL, a request written in two parts over a real socket.
import { createHmac } from 'node:crypto';
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { http, type Json } from '../../helpers/http.ts';

const OLD_SECRET = 'whsec-old-4b1d9e2a7c6f3085';
const NEW_SECRET = 'whsec-new-91c0f5e3a2b84d67';
const PATH = 'hooks/late_version';

let a: TestApp;

const playbook = (auth: string, tag: string) => `apiVersion: svc/v1
kind: Playbook
metadata: { name: late_version, path: ${PATH} }
inputs:
  tag: { type: string, required: true }
triggers:
  - { name: push, kind: webhook, auth: ${auth}, signature: github, payload: { tag: "${tag}" } }
workflow:
  - step: start
    tool: { name: t, kind: noop }
`;

beforeAll(async () => {
  a = await startTestApp();
  for (const [name, secret] of [['old_hook', OLD_SECRET], ['new_hook', NEW_SECRET]]) {
    const made = await http(a.url, 'POST', '/api/credentials', { name, type: 'custom', data: { secret } });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
  }
});
afterAll(async () => {
  await a?.close();
});

async function register(auth: string, tag: string): Promise<void> {
  const reg = await http(a.url, 'POST', '/api/catalog/playbook', { content: playbook(auth, tag) });
  expect(reg.status, JSON.stringify(reg.body)).toBe(201);
}

async function tags(): Promise<string[]> {
  const { rows } = await a.deps.db.query<{ tag: string }>(
    `SELECT e.context->'input'->'workload'->>'tag' AS tag FROM core.execution x
       JOIN core.event e ON e.execution_id = x.execution_id AND e.event_type = 'execution.started'
      WHERE x.path = $1 ORDER BY x.execution_id`,
    [PATH],
  );
  return rows.map((r) => r.tag);
}

/** A delivery signed with `secret`, in two parts: the headers and half the body, then (after `meanwhile`) the rest. */
function deliverInTwoParts(secret: string, id: string, meanwhile: () => Promise<void>): Promise<{ status: number; body: Json }> {
  const body = JSON.stringify({ id, pad: 'x'.repeat(200) });
  const signature = `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
  return new Promise((resolve, reject) => {
    const req = request(`${a.url}/api/hooks/${PATH}/push`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)), 'x-hub-signature-256': signature },
    }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text ? JSON.parse(text) : null }));
    });
    req.on('error', reject);
    req.flushHeaders();
    req.write(body.slice(0, 100));
    setTimeout(() => meanwhile().then(() => req.end(body.slice(100)), reject), 300);
  });
}

describe('a webhook delivery whose body is still arriving when a new version changes its trigger', () => {
  it('is checked with the secret of the new version: signed with the rotated-out one, 401 and nothing started', async () => {
    await register('old_hook', 'one');
    const answer = await deliverInTwoParts(OLD_SECRET, 'a', () => register('new_hook', 'two'));
    expect(answer.status, JSON.stringify(answer.body)).toBe(401);
    expect(answer.body.detail).toMatchObject({ code: 'signature_invalid' });
    expect(await tags()).toEqual([]);
    // Signed with the new secret, the same delivery starts.
    expect((await deliverInTwoParts(NEW_SECRET, 'a', async () => {})).status).toBe(202);
    expect(await tags()).toEqual(['two']);
  });

  it('is rendered with the payload of the new version, whose workflow it starts', async () => {
    const answer = await deliverInTwoParts(NEW_SECRET, 'b', () => register('new_hook', 'three'));
    expect(answer.status, JSON.stringify(answer.body)).toBe(202);
    expect(await tags()).toEqual(['two', 'three']);
  });
});
