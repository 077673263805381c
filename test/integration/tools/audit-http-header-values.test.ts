// A header fetch cannot send (a rendered value with a line break, a name with a space, a
// character past Latin-1) made fetch throw, quoting the value: the task failed `internal`, "a
// bug", with the value in its message. It is the task's field, or the credential's, that is wrong.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestStack, type TestStack } from '../../helpers/stack.ts';
import { startHttpTarget, type HttpTarget } from '../../helpers/http-target.ts';
import { http } from '../../helpers/http.ts';

let stack: TestStack;
let target: HttpTarget;
beforeAll(async () => {
  [stack, target] = await Promise.all([startTestStack(), startHttpTarget()]);
  const created = await http(stack.url, 'POST', '/api/credentials', { name: 'odd_key_auth', type: 'api_key', data: { key: 'line\nbreak-key-4242' } });
  expect(created.status).toBe(201);
}, 60_000);
afterAll(async () => Promise.all([stack?.close(), target?.close()]));

async function failedTask(name: string, task: string, payload: Record<string, unknown> = {}) {
  const path = `audit/${name}`;
  await stack.register(`apiVersion: svc/v1\nkind: Playbook\nmetadata: { name: ${name}, path: ${path} }\nworkflow:\n  - step: start\n    tool:\n      - ${task}\n`);
  const execution = await stack.wait(await stack.run(path, payload));
  expect(execution.status).toBe('failed');
  return execution.error;
}

describe('an http task whose header cannot be sent', () => {
  it('fails invalid_task naming the header, without quoting the value', async () => {
    const url = `${target.url}/echo`;
    const value = await failedTask('hdr_value', `{ name: t, kind: http, url: "${url}", headers: { X-Who: "{{ workload.who }}" } }`, { who: 'ann\r\nX-Injected: 1' });
    expect(value).toMatchObject({ code: 'invalid_task', message: expect.stringContaining('headers.X-Who') });
    expect(JSON.stringify(value)).not.toContain('Injected');

    const wide = await failedTask('hdr_wide', `{ name: t, kind: http, url: "${url}", headers: { X-Price: "{{ workload.price }}" } }`, { price: '5 €' });
    expect(wide).toMatchObject({ code: 'invalid_task', message: expect.stringContaining('headers.X-Price') });

    const name = await failedTask('hdr_name', `{ name: t, kind: http, url: "${url}", headers: { "{{ workload.header }}": "1" } }`, { header: 'Bad Name' });
    expect(name).toMatchObject({ code: 'invalid_task', message: expect.stringContaining('headers.') });
    expect(target.requests.filter((r) => r.path === '/echo')).toEqual([]);
  });

  it("fails invalid_credential when the credential's own header cannot be sent", async () => {
    const error = await failedTask('hdr_cred', `{ name: t, kind: http, auth: odd_key_auth, url: "${target.url}/echo" }`);
    expect(error).toMatchObject({ code: 'invalid_credential', message: expect.stringContaining('odd_key_auth') });
    expect(JSON.stringify(error)).not.toContain('break-key-4242');
  });
});
