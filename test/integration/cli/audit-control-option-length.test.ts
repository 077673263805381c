// A `--reason` longer than the server takes (1000 characters) and a `--from` longer than a step
// name may be (256) went to the server, whose 422 came back as exit 1, though the value is one no
// execution can take: a usage error (docs/cli.md, exit 2, the usage line), as an empty --from and
// a bad signal NAME are (audit-signal-name-usage). Nothing is sent; a value at the bound is sent.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { runSvc } from '../../helpers/process.ts';

let a: TestApp;
beforeAll(async () => {
  a = await startTestApp();
}, 60_000);
afterAll(async () => a?.close());

describe('an option value longer than the server takes', () => {
  it.each([
    ['cancel --reason of 1001', ['cancel', '1', '--reason', 'r'.repeat(1001)], '--reason is at most 1000 characters, got 1001'],
    ['pause --reason of 1001', ['pause', '1', '--reason', 'r'.repeat(1001)], '--reason is at most 1000 characters, got 1001'],
    ['resume --reason of 5000', ['resume', '1', '--reason', 'r'.repeat(5000)], '--reason is at most 1000 characters, got 5000'],
    ['retry --from of 257', ['retry', '1', '--from', 's'.repeat(257)], '--from expects a step name of at most 256 characters, got 257'],
  ])('svc %s: exit 2 naming the option, nothing sent', async (_label, argv, message) => {
    const r = await runSvc(argv, { SVC_SERVER_URL: a.url });
    expect(r.stderr).toContain(message);
    expect(r.stderr).toContain(`usage: svc ${argv[0]}`);
    expect(r.code).toBe(2);
  });

  it.each([
    ['cancel --reason of 1000', ['cancel', '1', '--reason', 'r'.repeat(1000)]],
    ['retry --from of 256', ['retry', '1', '--from', 's'.repeat(256)]],
  ])('svc %s: a value at the bound is sent', async (_label, argv) => {
    const r = await runSvc(argv, { SVC_SERVER_URL: a.url });
    expect(r.stderr).not.toContain('usage:');
    expect(r.code).toBe(4); // no execution 1
  });
});
