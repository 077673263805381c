// A target that redirects an http task to a URL with a user name and password
// (Location: http://bob:pw@host/…): fetch refuses such a URL and its error quotes it, so the
// task's `connection` error, the step's and the event log held the password. A task's own URL
// with one is refused before anything is sent (audit-http-url-userinfo.test.ts); a redirect's is
// now refused too, without quoting it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestStack, type TestStack } from '../../helpers/stack.ts';
import { startHttpTarget, type HttpTarget } from '../../helpers/http-target.ts';

const PASSWORD = 'hunter2-redirect-pw';
let stack: TestStack;
let target: HttpTarget;
beforeAll(async () => {
  [stack, target] = await Promise.all([
    startTestStack(),
    startHttpTarget((req, res) => {
      if (req.url !== '/moved') return;
      res.writeHead(302, { location: target.url.replace('http://', `http://bob:${PASSWORD}@`) + '/echo' });
      res.end();
    }),
  ]);
}, 60_000);
afterAll(async () => Promise.all([stack?.close(), target?.close()]));

describe('an http task redirected to a URL with a password', () => {
  it('fails connection without the password in its error or events', async () => {
    await stack.register(
      `apiVersion: svc/v1\nkind: Playbook\nmetadata: { name: moved, path: audit/moved }\nworkflow:\n  - step: start\n    tool:\n      - { name: t, kind: http, url: "${target.url}/moved" }\n`,
    );
    const id = await stack.run('audit/moved');
    const execution = await stack.wait(id);
    expect(execution.status).toBe('failed');
    expect(execution.error).toMatchObject({ code: 'connection', message: expect.stringContaining('user name or password') });
    expect(JSON.stringify(execution)).not.toContain(PASSWORD);
    expect(JSON.stringify(await stack.events(id))).not.toContain(PASSWORD);
    expect(target.requests.filter((r) => r.path === '/echo')).toEqual([]);
  });
});
