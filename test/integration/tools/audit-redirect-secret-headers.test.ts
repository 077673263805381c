// An http task's own headers and body that hold a secret go to the URL's origin only: a real
// `svc worker` runs tasks whose header (`X-Token: "{{ keychain.tok.access_token }}"`) and body
// carry a keychain token, against a target that redirects to another origin (localhost instead
// of 127.0.0.1). fetch drops only Authorization and Cookie on such a hop: the token in X-Token
// reached the host the redirect named, and a 307 sent the body, token and all, on to it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHttpTarget, type HttpTarget } from '../../helpers/http-target.ts';
import { http } from '../../helpers/http.ts';
import { startWorkerStack, type WorkerStack } from '../../helpers/worker-process.ts';

const TOKEN = 'kc-redirect-Token-7f3a91';

let s: WorkerStack;
let target: HttpTarget;
let port = '';

beforeAll(async () => {
  target = await startHttpTarget((_req, res, recorded) => {
    if (!recorded.path.startsWith('/go')) return;
    const status = Number(recorded.query.status ?? 302);
    // Another origin: the same server by another host name.
    res.writeHead(status, { location: `http://localhost:${port}/echo` }).end();
  });
  port = new URL(target.url).port;
  s = await startWorkerStack({ workers: 1 });
}, 120_000);
afterAll(async () => {
  await s?.close();
  await target?.close();
});

const playbook = (base: string) => `
apiVersion: svc/v1
kind: Playbook
metadata: { name: redirected, path: masking/redirected }
workflow:
  - step: start
    tool:
      - name: header
        kind: http
        url: "${base}/go?status=302"
        headers: { X-Token: "{{ keychain.tok.access_token }}", X-Plain: not-a-secret }
    next: [ { step: body } ]
  - step: body
    tool:
      - name: body
        kind: http
        method: POST
        url: "${base}/go?status=307"
        body: { token: "{{ keychain.tok.access_token }}" }
`;

describe('an http task redirected to another origin', () => {
  it('sends a header or a body holding a secret to no other origin', async () => {
    const registered = await s.register(playbook(target.url));
    const stored = await http(s.url, 'POST', `/api/keychain/${String(registered.catalog_id)}/tok`, {
      token_data: { access_token: TOKEN },
      credential_type: 'bearer',
      cache_type: 'secret',
      scope_type: 'global',
      ttl_seconds: 3600,
    });
    expect(stored.status).toBeLessThan(300);
    const id = await s.run('masking/redirected');
    const execution = await s.wait(id, 30_000);

    const atTarget = target.requests.filter((r) => r.headers.host === `127.0.0.1:${port}`);
    const elsewhere = target.requests.filter((r) => r.headers.host === `localhost:${port}`);
    // The target got the token both ways (the task did send it), and the redirect was followed.
    expect(atTarget.map((r) => r.headers['x-token'] ?? r.body)).toEqual([TOKEN, JSON.stringify({ token: TOKEN })]);
    expect(elsewhere.length).toBeGreaterThanOrEqual(1);
    expect(elsewhere[0].headers['x-plain']).toBe('not-a-secret');
    expect(JSON.stringify(elsewhere)).not.toContain(TOKEN);

    // The 307 that would send the token on is not followed: the task fails, saying why.
    expect(execution.status).toBe('failed');
    expect(execution.error).toMatchObject({ step: 'body', code: 'connection' });
    expect((execution.error as { message: string }).message).toContain('would send the request\'s body on: not followed');
  });
});
