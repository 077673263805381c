// A secret is masked in its JSON-escaped form as JavaScript writes it, but other JSON encoders
// escape more: PHP's json_encode writes every '/' as '\/' (a token in base64 holds '/'), and
// Python's json.dumps writes every character past ASCII as \uXXXX. A target echoing the request so
// stored the token and the password readable. Run by a real `svc worker` against a real HTTP
// server on port 0 that echoes in both styles: neither secret, in any form, is stored.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { http } from '../../helpers/http.ts';
import { startHttpTarget, type HttpTarget } from '../../helpers/http-target.ts';
import { startWorkerStack, type WorkerStack } from '../../helpers/worker-process.ts';

const TOKEN = 'aB3/xY9+Qw7/Lm2Z';
const PASSWORD = 'pässwörd-Ω-9174';

const phpJson = (text: string) => JSON.stringify(text).replace(/\//g, '\\/');
const pythonJson = (text: string) => JSON.stringify(text).replace(/[\u0080-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);

let target: HttpTarget;
let s: WorkerStack;
beforeAll(async () => {
  target = await startHttpTarget((req, res, recorded) => {
    if (recorded.path !== '/echo-escaped') return;
    const auth = String(req.headers.authorization);
    const sent = recorded.body;
    res.writeHead(200, { 'content-type': 'text/plain' }).end(`{"php": ${phpJson(auth)}, "python": ${pythonJson(sent)}}`);
  });
  s = await startWorkerStack({ workers: 1 });
  for (const c of [
    { name: 'api_auth', type: 'bearer', data: { token: TOKEN } },
    { name: 'login_auth', type: 'custom', data: { password: PASSWORD } },
  ]) expect((await http(s.url, 'POST', '/api/credentials', c)).status).toBe(201);
}, 120_000);
afterAll(async () => {
  await s?.close();
  await target?.close();
});

it('masks a secret escaped as PHP and Python write JSON', async () => {
  await s.register(`
apiVersion: svc/v1
metadata: { name: json_escapes, path: audit/json_escapes }
workflow:
  - step: start
    tool:
      - { name: login, kind: shell, auth: login_auth, command: "true" }
      - { name: call, kind: http, method: POST, url: "{{ workload.base }}/echo-escaped", auth: api_auth, headers: { content-type: text/plain }, body: "${PASSWORD}" }
`);
  const id = await s.run('audit/json_escapes', { base: target.url });
  const final = await s.wait(id);
  expect(final.error).toBeNull();
  // The target was sent both (the test would pass on a target that never saw them).
  const sent = target.requests.find((q) => q.path === '/echo-escaped');
  expect([sent?.headers.authorization, sent?.body]).toEqual([`Bearer ${TOKEN}`, PASSWORD]);
  const stored = JSON.stringify([await s.events(id), final, (await http(s.url, 'GET', `/api/executions/${id}/steps/start`)).body]);
  // As stored, each escape's backslash is itself escaped once more.
  for (const form of [phpJson(TOKEN), pythonJson(PASSWORD)]) expect(stored, form).not.toContain(JSON.stringify(form.slice(1, -1)).slice(1, -1));
  expect(stored).not.toContain('aB3');
}, 60_000);
