// An answer's headers are a record by name. Headers yields each Set-Cookie apart (every other
// repeated header comes joined), so a record built from its entries kept only the last cookie.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestStack, type TestStack } from '../../helpers/stack.ts';
import { startHttpTarget, type HttpTarget } from '../../helpers/http-target.ts';

let stack: TestStack;
let target: HttpTarget;
beforeAll(async () => {
  [stack, target] = await Promise.all([
    startTestStack(),
    startHttpTarget((req, res) => {
      if (req.url !== '/login') return;
      res.setHeader('set-cookie', ['session=abc; Path=/', 'theme=dark']);
      res.setHeader('x-seen', ['1', '2']);
      res.end('ok');
    }),
  ]);
}, 60_000);
afterAll(async () => Promise.all([stack?.close(), target?.close()]));

describe("an http task's answer headers", () => {
  it('keeps every Set-Cookie, joined as other repeated headers are', async () => {
    await stack.register(
      `apiVersion: svc/v1\nkind: Playbook\nmetadata: { name: cookies, path: audit/cookies }\nworkflow:\n  - step: start\n    tool:\n      - { name: t, kind: http, url: "${target.url}/login" }\n`,
    );
    const execution = await stack.wait(await stack.run('audit/cookies'));
    expect(execution.status).toBe('completed');
    const done = (await stack.events(Number(execution.execution_id))).find((e) => e.event_type === 'command.completed');
    const headers = done?.result?.tasks?.t?.data?.headers;
    expect(headers?.['x-seen']).toBe('1, 2');
    expect(headers?.['set-cookie']).toBe('session=abc; Path=/, theme=dark');
  });
});
