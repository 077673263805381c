// An http task's url with a user name and password (http://user:pass@host/) was registered, though
// no call can use it: fetch refuses a URL with credentials and its error quotes the URL, so the
// run failed with the password in the step's error and the event log. As an mcp endpoint's now
// (4f0e5b4): refused at registration naming the field, and a rendered one fails the task as
// invalid_task without the value, nothing sent.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { http as httpTool } from '../../../src/worker/tools/http.ts';
import { http } from '../../helpers/http.ts';
import { startHttpTarget, type HttpTarget } from '../../helpers/http-target.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';

let app: TestApp;
let target: HttpTarget;
beforeAll(async () => {
  [app, target] = await Promise.all([startTestApp(), startHttpTarget()]);
}, 60_000);
afterAll(async () => Promise.all([app?.close(), target?.close()]));

const withPassword = () => target.url.replace('http://', 'http://robot:s3cret-pw@');

describe("an http task's url holding a user name and password", () => {
  it('a literal one is refused at registration, naming url and its line', async () => {
    const content = `apiVersion: svc/v1\nkind: Playbook\nmetadata: { name: pw, path: t/pw }\nworkflow:\n  - step: start\n    tool:\n      - { name: call, kind: http, url: "${withPassword()}/x" }\n`;
    const r = await http(app.url, 'POST', '/api/catalog/playbook', { content });
    expect(r.status).toBe(400);
    expect(r.body.detail.errors).toEqual([expect.stringMatching(/^workflow\[0\]\.tool\[0\]\.url: must not hold a user name or password/)]);
    expect(r.body.detail.problems).toEqual([expect.objectContaining({ line: 7 })]);
  });

  it('a rendered one fails the task as invalid_task, without the password, nothing sent', async () => {
    const before = target.requests.length;
    const outcome = await httpTool({ name: 't', kind: 'http', url: `${withPassword()}/x` }, { signal: new AbortController().signal, env: {} });
    expect(outcome).toMatchObject({ status: 'error', error: { code: 'invalid_task' } });
    expect(JSON.stringify(outcome)).not.toContain('s3cret-pw');
    expect(target.requests.length).toBe(before);
  });
});
