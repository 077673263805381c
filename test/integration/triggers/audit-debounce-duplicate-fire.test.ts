// A repeated webhook delivery (the same delivery id) to a debounced playbook answered 202
// `duplicate: true` and started nothing, yet it had already replaced the open window's payload and
// pushed its deadline back: the window's extension was written on its own before the fire's
// transaction, which then found the fire key stored and wrote nothing else. The extension now
// commits with the fire or not at all (real server and database, no worker).
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { http } from '../../helpers/http.ts';

const SECRET = 'bearer-debounce-hook-3c9a1e7f5b2d4068';
const PATH = 'hooks/debounced';
const PLAYBOOK = `apiVersion: svc/v1
kind: Playbook
metadata: { name: debounced, path: ${PATH} }
debounce: { key: "{{ workload.customer }}", seconds: 30 }
workload: { customer: none, v: none }
triggers:
  - name: push
    kind: webhook
    auth: debounce_hook
    signature: bearer
    delivery_id: "{{ request.headers['x-delivery'] }}"
    payload: { customer: "{{ request.body.customer }}", v: "{{ request.body.v }}" }
workflow:
  - step: start
    tool: { name: t, kind: noop }
`;

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
  expect((await http(t.url, 'POST', '/api/credentials', { name: 'debounce_hook', type: 'custom', data: { secret: SECRET } })).status).toBe(201);
  const reg = await http(t.url, 'POST', '/api/catalog/playbook', { content: PLAYBOOK });
  expect(reg.status, JSON.stringify(reg.body)).toBe(201);
});
afterAll(async () => {
  await t?.close();
});

const deliver = (id: string, body: Record<string, unknown>) =>
  http(t.url, 'POST', `/api/hooks/${PATH}/push`, body, { authorization: `Bearer ${SECRET}`, 'x-delivery': id });

const windowOf = async (id: number) =>
  (await t.deps.db.query<{ args: { v: string } | null; not_before: Date }>(`SELECT args, not_before FROM core.admission WHERE execution_id = $1`, [id])).rows[0];

it('a repeated delivery to a debounced playbook leaves the open window as it was: payload and deadline', async () => {
  const first = await deliver('delivery-b', { customer: 'acme', v: 'first' });
  expect(first.status).toBe(202);
  expect(first.body.duplicate).toBe(false);
  const id: number = first.body.execution_id;
  // No args of its own yet: the window runs the opener's payload until a start joins it.
  const before = await windowOf(id);
  expect(before.args).toBeNull();

  await new Promise((ok) => setTimeout(ok, 1_100));
  const again = await deliver('delivery-b', { customer: 'acme', v: 'DUPLICATE' });
  expect(again.status).toBe(202);
  expect(again.body).toEqual({ execution_id: id, duplicate: true });
  const after = await windowOf(id);
  expect(after.args, 'the duplicate replaced the payload').toBeNull();
  expect(after.not_before.getTime(), 'the duplicate moved the deadline').toBe(before.not_before.getTime());

  // A new delivery still joins the window: its payload is the one that runs.
  const next = await deliver('delivery-c', { customer: 'acme', v: 'second' });
  expect(next.status).toBe(202);
  expect(next.body.execution_id).toBe(id);
  expect((await windowOf(id)).args?.v).toBe('second');
});
