// A signal NAME no step can wait for, and an empty --from, are usage errors (docs/cli.md: exit 2,
// "a bad value", the usage line printed, nothing sent). `svc signal 1 'bad name'` went to the
// server, whose 422 (name: must be a signal name) came back as exit 1, and `svc retry 1 --from ''`
// likewise (from_step: Invalid length).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { runSvc } from '../../helpers/process.ts';

let a: TestApp;
beforeAll(async () => {
  a = await startTestApp();
}, 60_000);
afterAll(async () => a?.close());

describe('values no execution can take', () => {
  it.each([
    [['signal', '1', 'bad name'], 'the signal NAME is letters, digits, _ . - (starting with a letter or _, at most 128), got "bad name"'],
    [['signal', '1', '9lives'], 'got "9lives"'],
    [['signal', '1', 'a'.repeat(129)], `got "${'a'.repeat(129)}"`],
    [['retry', '1', '--from', ''], '--from expects a step name, got ""'],
  ])('svc %j: exit 2 naming the value, nothing sent', async (args, message) => {
    const r = await runSvc(args, { SVC_SERVER_URL: a.url });
    expect(r.stderr).toContain(message);
    expect(r.stderr).toContain(`usage: svc ${args[0]}`);
    expect(r.code).toBe(2);
  });

  it.each([[['signal', '1', 'approval.v2-final_ok']], [['signal', '1', 'a'.repeat(128)]]])('svc %j: a name a step can wait for is sent', async (args) => {
    const r = await runSvc(args, { SVC_SERVER_URL: a.url });
    expect(r.stderr).not.toContain('usage:');
    expect(r.code).toBe(4); // no execution 1
  });
});
