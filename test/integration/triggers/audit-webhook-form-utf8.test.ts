// A form body (application/x-www-form-urlencoded) is read as a query string is: its bytes and its
// percent-encoding are UTF-8, or the delivery is 400 bad_request naming the field (docs/webhooks.md,
// Answers). Node's decoding turned each bad sequence into U+FFFD, so a workload held text the
// sender never sent, while the same field in the query string was refused.
import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { executionApi } from '../../helpers/execution-api.ts';
import { http } from '../../helpers/http.ts';

const SECRET = 'form-hook-secret-3c9d0e1f2a';
const PATH = 'hooks/form_utf8';
let t: TestApp;

beforeAll(async () => {
  t = await startTestApp();
  expect((await http(t.url, 'POST', '/api/credentials', { name: 'form_hook', type: 'custom', data: { secret: SECRET } })).status).toBe(201);
  await executionApi(t.url).register(`apiVersion: svc/v1
kind: Playbook
metadata: { name: form_utf8, path: ${PATH} }
workload: { form: null }
triggers:
  - { name: form, kind: webhook, auth: form_hook, signature: github, payload: { form: "{{ request.body }}" } }
workflow:
  - step: start
    tool: { name: t, kind: noop }
`);
});
afterAll(async () => {
  await t?.close();
});

async function deliverForm(body: Buffer): Promise<{ status: number; body: { execution_id?: number; detail?: unknown } }> {
  const res = await fetch(`${t.url}/api/hooks/${PATH}/form`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-hub-signature-256': `sha256=${createHmac('sha256', SECRET).update(body).digest('hex')}` },
    body,
  });
  return { status: res.status, body: (await res.json()) as { execution_id?: number; detail?: unknown } };
}
const executions = async () => (await t.deps.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM core.execution WHERE path = $1`, [PATH])).rows[0].n;
const refusedForBody = async () => (await t.deps.metrics.triggerRefused.get()).values.find((v) => v.labels.reason === 'body')?.value ?? 0;

describe('a webhook form body', () => {
  it('whose percent-encoding or bytes are not UTF-8 is 400 naming the field, counted, nothing started; a UTF-8 one is read exactly', async () => {
    const before = { executions: await executions(), refused: await refusedForBody() };
    const percent = await deliverForm(Buffer.from('ok=1&name=%FF%FE'));
    expect(percent.status, JSON.stringify(percent.body)).toBe(400);
    expect(percent.body.detail).toEqual({ code: 'bad_request', message: 'invalid body', errors: ['name: is not percent-encoded UTF-8'] });
    const bytes = await deliverForm(Buffer.concat([Buffer.from('ok=1&name='), Buffer.from([0xe9])]));
    expect(bytes.status, JSON.stringify(bytes.body)).toBe(400);
    expect(bytes.body.detail).toEqual({ code: 'bad_request', message: expect.stringMatching(/^the body is not valid UTF-8 \(at byte 10\)/) });
    expect(await executions()).toBe(before.executions);
    expect(await refusedForBody()).toBe(before.refused + 2);

    const good = await deliverForm(Buffer.from('name=caf%C3%A9&plus=a+b&raw=é&name=2'));
    expect(good.status, JSON.stringify(good.body)).toBe(202);
    const { rows } = await t.deps.db.query<{ context: { input: { workload: unknown } } }>(`SELECT context FROM core.event WHERE execution_id = $1 AND event_type = 'execution.started'`, [good.body.execution_id]);
    expect(rows[0].context.input.workload).toEqual({ form: { name: ['café', '2'], plus: 'a b', raw: 'é' } });
  });
});
