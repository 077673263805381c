// A worker that sent the claim headers, one of them malformed (`x-svc-command: abc`, an attempt
// of 0, a worker id of 300 characters), was told to send them: 403 'name the command it runs for
// in the headers x-svc-command, x-svc-attempt, x-svc-worker', which it had. The refusal now
// names the header at fault and what it must be. Found by openapi-refusals.test.ts.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { asWorker } from '../../helpers/auth.ts';
import { http } from '../../helpers/http.ts';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
  expect((await http(t.url, 'POST', '/api/credentials', { name: 'c1', type: 'bearer', data: { token: 'secret-token' } })).status).toBe(201);
});
afterAll(async () => t?.close());

const good = { 'x-svc-command': '1', 'x-svc-attempt': '1', 'x-svc-worker': 'w1' };

it('names the malformed claim header, on each route that reads them', async () => {
  const cases: [Record<string, string>, string][] = [
    [{ 'x-svc-command': 'abc' }, 'x-svc-command: must be an integer from 1 to 9007199254740991'],
    [{ 'x-svc-attempt': '0' }, 'x-svc-attempt: must be an integer from 1 to 2147483647'],
    [{ 'x-svc-worker': 'w'.repeat(300) }, 'x-svc-worker: '],
  ];
  for (const path of ['/api/credentials/c1?include_data=true', '/api/secrets/00000000-0000-4000-8000-000000000000', '/api/keychain/1/k1']) {
    for (const [bad, said] of cases) {
      const res = await http(t.url, 'GET', path, undefined, { ...asWorker, ...good, ...bad });
      expect(res.status, `${path} ${JSON.stringify(bad).slice(0, 40)}`).toBe(403);
      expect(res.body.detail.code).toBe('secret_not_granted');
      expect(res.body.detail.message, path).toContain(said);
      expect(res.body.detail.message).not.toContain('name the command it runs for');
    }
  }
  // None sent: told to send them, as before.
  const none = await http(t.url, 'GET', '/api/credentials/c1?include_data=true', undefined, asWorker);
  expect(none.status).toBe(403);
  expect(none.body.detail.message).toContain('name the command it runs for in the headers x-svc-command, x-svc-attempt, x-svc-worker');
});
