// A bad value is a usage error before anything is sent (docs/cli.md: exit 2, "a bad value", the
// usage line printed). svc list --limit and svc limits show --keys checked only the lower bound:
// a value over the most their usage names (500, 1000) went to the server, whose 422 was exit 1.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { runSvc } from '../../helpers/process.ts';

let a: TestApp;
beforeAll(async () => {
  a = await startTestApp();
}, 60_000);
afterAll(async () => a?.close());

describe('page sizes over their bound', () => {
  it.each([
    [['list', '--limit', '501'], '--limit expects an integer from 1 to 500, got "501"'],
    [['limits', 'show', 'x', '--keys', '1001'], '--keys expects an integer from 1 to 1000, got "1001"'],
  ])('svc %j: exit 2 naming the option and its bound, nothing sent', async (args, message) => {
    const r = await runSvc(args, { SVC_SERVER_URL: a.url });
    expect(r.stderr).toContain(message);
    expect(r.stderr).toContain('usage: svc');
    expect(r.code).toBe(2);
  });

  it.each([[['list', '--limit', '500']], [['limits', 'show', 'x', '--keys', '1000']]])('svc %j: the bound itself is sent', async (args) => {
    const r = await runSvc(args, { SVC_SERVER_URL: a.url });
    expect(r.stderr).not.toContain('usage:');
    expect([0, 4]).toContain(r.code); // an empty list; no such limit
  });
});
