// A credential whose schema required 50,000 fields, sent with none, was answered with 50,000
// errors: an answer as large as the request, built and sent for any client. Every refusal's
// `detail.errors` now lists the first 100 (MAX_LISTED_ERRORS, src/errors.ts), then `and N more`;
// `detail.problems` beside them is cut alike. Found by the bad-input audit (helper).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { asWorker } from '../../helpers/auth.ts';
import { http } from '../../helpers/http.ts';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => t?.close());

const fields = (n: number) => Array.from({ length: n }, (_, i) => `f${i}`);

describe('a refusal of many problems', () => {
  it('a credential validation lists the first 100, then how many more, and stores nothing', async () => {
    const res = await http(t.url, 'POST', '/api/credentials', { name: 'wide', type: 'custom', data: {}, schema: { required: fields(5000) } });
    expect(res.status).toBe(400);
    expect(res.body.detail.code).toBe('validation_failed');
    const errors: string[] = res.body.detail.errors;
    expect(errors).toHaveLength(101);
    expect(errors[0]).toMatch(/f0/);
    expect(errors[100]).toBe('and 4900 more');
    expect((await http(t.url, 'GET', '/api/credentials/wide')).status).toBe(404);
  });

  it('a request shape refusal (valibot) is capped alike', async () => {
    const events = Array.from({ length: 3000 }, () => ({ event_type: 'nonsense' }));
    const res = await http(t.url, 'POST', '/api/worker/report', { worker_id: 'w1', events }, asWorker);
    expect(res.status).toBe(422);
    const errors: string[] = res.body.detail.errors;
    expect(errors).toHaveLength(101);
    expect(errors[0]).toMatch(/^events\[0\]\./);
    expect(errors[100]).toMatch(/^and \d+ more$/);
  });

  it('100 problems or fewer are listed as they were', async () => {
    const res = await http(t.url, 'POST', '/api/credentials', { name: 'narrow', type: 'custom', data: {}, schema: { required: fields(3) } });
    expect(res.status).toBe(400);
    expect(res.body.detail.errors).toHaveLength(3);
  });
});
