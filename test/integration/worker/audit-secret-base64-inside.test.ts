// A secret is masked in its base64 form, but only where its base64 stood alone: inside the base64
// of a longer text (an Authorization header built with `| b64encode` from a user name and a
// password, or echoed whole: `Bearer <token>`; a JSON body) its bytes fall at another place in the
// 3-byte groups and its characters differ. A target that echoed such a header, or a shell task
// that printed it, stored the password and the token readable (base64 -d). Run by a real
// `svc worker` against a real HTTP server on port 0: neither form of either secret is stored.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { http } from '../../helpers/http.ts';
import { startHttpTarget, type HttpTarget } from '../../helpers/http-target.ts';
import { startWorkerStack, type WorkerStack } from '../../helpers/worker-process.ts';

const TOKEN = 'tok-9Zq4-Lm7x-Wr2p';
const PASSWORD = 'pw-Hy6v-Qa3k';

let target: HttpTarget;
let s: WorkerStack;
beforeAll(async () => {
  // Echoes each request header's value in base64, as a debugging endpoint or a Lambda event does.
  target = await startHttpTarget((req, res, recorded) => {
    if (recorded.path !== '/echo64') return;
    const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, Buffer.from(String(v)).toString('base64')]));
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ headers, body: Buffer.from(recorded.body).toString('base64') }));
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

/** Every base64 (and base64url) text of `secret` at each of the three places in a 3-byte group, as a decoder would find it. */
function base64Forms(secret: string): string[] {
  return [0, 1, 2].flatMap((k) => {
    const text = Buffer.from(`${'x'.repeat(k)}${secret}`).toString('base64');
    const inner = text.slice(Math.ceil((k * 8) / 6), Math.floor(((k + secret.length) * 8) / 6));
    return [inner, inner.replace(/\+/g, '-').replace(/\//g, '_')];
  });
}

it('masks a token and a password inside the base64 of a longer text', async () => {
  await s.register(`
apiVersion: svc/v1
metadata: { name: b64_inside, path: audit/b64_inside }
workflow:
  - step: start
    tool:
      - { name: bearer, kind: http, method: POST, url: "{{ workload.base }}/echo64", auth: api_auth, body: { note: "sent" } }
      - { name: printed, kind: shell, auth: login_auth, command: "printf 'svc-user:%s' \\"$P\\" | base64; printf '{\\"p\\":\\"%s\\"}' \\"$P\\" | base64", env: { P: "${PASSWORD}" } }
`);
  const id = await s.run('audit/b64_inside', { base: target.url });
  const final = await s.wait(id);
  expect(final.error).toBeNull();
  const stored = JSON.stringify([await s.events(id), final, (await http(s.url, 'GET', `/api/executions/${id}/steps/start`)).body]);
  // The target did get them (the test would pass on a target that never saw them).
  const sent = target.requests.find((q) => q.path === '/echo64');
  expect(sent?.headers.authorization).toBe(`Bearer ${TOKEN}`);
  for (const form of [...base64Forms(TOKEN), ...base64Forms(PASSWORD)]) expect(stored, form).not.toContain(form);
  expect(stored).not.toContain(TOKEN);
}, 60_000);
