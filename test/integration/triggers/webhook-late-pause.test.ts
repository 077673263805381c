// A webhook delivery is checked against its trigger's state in the transaction of its fire, not
// only when its headers arrive: a trigger paused, or removed by a new version, while the body is
// still streaming starts nothing (409 trigger_paused, 404). Real server, real PostgreSQL, a
// request written in two parts over a real socket.
import { createHmac } from 'node:crypto';
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { http, type Json } from '../../helpers/http.ts';

const SECRET = 'whsec-late-pause-3e9a1c7b5d2f4a60';
const PATH = 'hooks/late';

let a: TestApp;

const playbook = (triggers: string) => `apiVersion: svc/v1
kind: Playbook
metadata: { name: late, path: ${PATH} }
triggers:
${triggers}workflow:
  - step: start
    tool: { name: t, kind: noop }
`;
const hook = (name: string) => `  - { name: ${name}, kind: webhook, auth: late_hook, signature: github }\n`;

beforeAll(async () => {
  a = await startTestApp();
  const made = await http(a.url, 'POST', '/api/credentials', { name: 'late_hook', type: 'custom', data: { secret: SECRET } });
  expect(made.status, JSON.stringify(made.body)).toBe(201);
  await register(hook('paused_late') + hook('removed_late'));
});
afterAll(async () => {
  await a?.close();
});

async function register(triggers: string): Promise<void> {
  const reg = await http(a.url, 'POST', '/api/catalog/playbook', { content: playbook(triggers) });
  expect(reg.status, JSON.stringify(reg.body)).toBe(201);
}

async function executions(): Promise<number> {
  const { rows } = await a.deps.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM core.execution WHERE path = $1`, [PATH]);
  return rows[0]!.n;
}

/**
 * Sends a signed delivery to `name` in two parts: the headers and the first half of the body, then
 * (once `meanwhile` is done, the server having read the trigger at the headers) the rest.
 */
function deliverInTwoParts(name: string, meanwhile: () => Promise<void>): Promise<{ status: number; body: Json }> {
  const body = JSON.stringify({ ref: 'refs/heads/main', pad: 'x'.repeat(200) });
  const signature = `sha256=${createHmac('sha256', SECRET).update(body).digest('hex')}`;
  return new Promise((resolve, reject) => {
    const req = request(`${a.url}/api/hooks/${PATH}/${name}`, {
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
    // The server reads the trigger as the headers arrive (its body limit); the body waits meanwhile.
    setTimeout(() => meanwhile().then(() => req.end(body.slice(100)), reject), 300);
  });
}

describe('a webhook delivery whose body is still arriving', () => {
  it('when its trigger is paused meanwhile: 409 trigger_paused, nothing started or recorded', async () => {
    const before = await executions();
    const answer = await deliverInTwoParts('paused_late', async () => {
      const paused = await http(a.url, 'POST', `/api/triggers/${PATH}/paused_late/pause`, {});
      expect(paused.status, JSON.stringify(paused.body)).toBe(200);
    });
    expect(answer.status, JSON.stringify(answer.body)).toBe(409);
    expect(answer.body.detail).toMatchObject({ code: 'trigger_paused' });
    expect(await executions()).toBe(before);
    const { rows } = await a.deps.db.query(`SELECT 1 FROM core.trigger_fire WHERE path = $1 AND name = 'paused_late'`, [PATH]);
    expect(rows).toHaveLength(0);
    // Resumed, the same delivery starts.
    expect((await http(a.url, 'POST', `/api/triggers/${PATH}/paused_late/resume`, {})).status).toBe(200);
    expect((await deliverInTwoParts('paused_late', async () => {})).status).toBe(202);
    expect(await executions()).toBe(before + 1);
  });

  it('when a new version removes its trigger meanwhile: 404 not_found, nothing started', async () => {
    const before = await executions();
    const answer = await deliverInTwoParts('removed_late', () => register(hook('paused_late')));
    expect(answer.status, JSON.stringify(answer.body)).toBe(404);
    expect(answer.body.detail).toMatchObject({ code: 'not_found' });
    expect(await executions()).toBe(before);
  });
});
