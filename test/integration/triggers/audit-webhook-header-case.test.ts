// A webhook trigger reading a request header by the name its sender's documentation writes
// (GitHub's X-GitHub-Delivery, X-GitHub-Event): the names in request.headers are lower-cased, so
// such a read is never there. It registered, and then its delivery_id answered every signed
// delivery 400 ('request.headers has no attribute X-GitHub-Delivery'), and a payload read under
// `| default('')` was silently the default. Registration now says so at the template's place,
// with the read that works; nothing is registered.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { http } from '../../helpers/http.ts';

let a: TestApp;
beforeAll(async () => {
  a = await startTestApp();
});
afterAll(async () => {
  await a?.close();
});

const playbook = (trigger: string) => `apiVersion: svc/v1
kind: Playbook
metadata: { name: hooks, path: audit/header-case }
workload: { event: none, token: none }
triggers:
${trigger}
workflow:
  - step: start
    tool: { name: t, kind: noop }
`;

type Problem = { path: string; message: string };
const problemsOf = (body: unknown): Problem[] => (body as { detail?: { problems?: Problem[] } }).detail?.problems ?? [];

describe('a webhook template reading a header by a capitalised name', () => {
  it('is a 400 problem at its place naming the lower-cased read, in delivery_id and in payload, guarded or not', async () => {
    const res = await http(a.url, 'POST', '/api/catalog/playbook', {
      content: playbook(`  - name: push
    kind: webhook
    auth: gh_hook
    signature: github
    delivery_id: "{{ request.headers['X-GitHub-Delivery'] }}"
    payload:
      event: "{{ request.headers['X-GitHub-Event'] | default('') }}"
      token: "{{ request.headers.X_Token if request.headers.X_Token is defined else 'none' }}"`),
    });
    expect(res.status, JSON.stringify(res.body)).toBe(400);
    const problems = problemsOf(res.body);
    expect(problems).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ path: 'triggers[0].delivery_id', message: expect.stringContaining(`(write request.headers["x-github-delivery"])`) }),
        expect.objectContaining({ path: 'triggers[0].payload.event', message: expect.stringContaining(`'request.headers["X-GitHub-Event"]' is never there: request.headers has its names lower-cased`) }),
        expect.objectContaining({ path: 'triggers[0].payload.token', message: expect.stringContaining('(write request.headers.x_token)') }),
      ]),
    );
    expect((await http(a.url, 'GET', '/api/catalog/playbook/audit/header-case')).status).toBe(404);
  });

  it('lower-cased names register, and a computed name is not judged', async () => {
    const res = await http(a.url, 'POST', '/api/catalog/playbook', {
      content: playbook(`  - name: push
    kind: webhook
    auth: gh_hook
    signature: github
    delivery_id: "{{ request.headers['x-github-delivery'] }}"
    payload: { event: "{{ request.headers['x-github-event'] }}", token: "{{ request.headers['X-' ~ 'Token'] | default('none') }}" }`),
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
  });
});
