// Issue 30, item 4: `POST /api/credentials/{name}/test` sends an HTTP credential's auth "against a
// URL given in the request". A `url` that is not an http(s) URL is bad input, and bad input is a
// 4xx naming the field: it was a 200 `{ok: false, message: 'url is not a URL'}`, as if the target
// had answered, which a client reading `ok` could not tell from a refused login. Now it is 422
// naming `url`, and nothing is sent anywhere.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { http } from '../../helpers/http.ts';
import { startHttpTarget, type HttpTarget } from '../../helpers/http-target.ts';

let t: TestApp;
let target: HttpTarget;
beforeAll(async () => {
  t = await startTestApp();
  target = await startHttpTarget((_req, res) => {
    res.writeHead(200);
    res.end();
  });
  expect((await http(t.url, 'POST', '/api/credentials', { name: 'probe_bearer', type: 'bearer', data: { token: 'tok-0123' } })).status).toBe(201);
});
afterAll(async () => {
  await target?.close();
  await t?.close();
});

describe('the url of a credential test', () => {
  it.each(['not a url', 'ftp://127.0.0.1/x', 'file:///etc/passwd', '/relative/path'])('%j is 422 naming url', async (url) => {
    const res = await http(t.url, 'POST', '/api/credentials/probe_bearer/test', { url });
    expect(res.status).toBe(422);
    expect(JSON.stringify(res.body.detail)).toMatch(/\burl: /);
    expect(JSON.stringify(res.body)).not.toContain('tok-0123');
  });

  it('an http URL is still tried and answered 200 with the target\'s status', async () => {
    const res = await http(t.url, 'POST', '/api/credentials/probe_bearer/test', { url: `${target.url}/x` });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ ok: true, status: 200, type: 'bearer' });
  });
});
