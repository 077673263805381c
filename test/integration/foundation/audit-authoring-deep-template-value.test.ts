// A template rendering on the server to a value nested thousands of levels deep (`fromjson` of
// "[[[[…]]]]" in loop.in or a playbook task's args) overflowed the stack where the start was
// written: POST /api/run/playbook answered 500. The render now fails: the run's template_error.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { http } from '../../helpers/http.ts';
import { startTestStack, type TestStack } from '../../helpers/stack.ts';

let s: TestStack;
beforeAll(async () => {
  s = await startTestStack();
}, 120_000);
afterAll(async () => s?.close());

const DEEP = `('[' * 20000 ~ ']' * 20000) | fromjson`;
const playbook = (path: string, workflow: string) => `apiVersion: svc/v1\nkind: Playbook\nmetadata: { name: deep, path: ${path} }\nworkflow:\n${workflow}`;

describe('a rendered value nested past 128 levels', () => {
  it.each([
    ['tests/deep/loop', `  - step: start\n    loop: { in: "{{ [${DEEP}] }}", iterator: it }\n    tool: { kind: noop }\n`, 'start.loop.in'],
    ['tests/deep/child', `  - step: start\n    tool: { name: c, kind: playbook, path: tests/deep/loop, args: { d: "{{ ${DEEP} }}" } }\n`, 'start.c.args.d'],
    ['tests/deep/set', `  - step: start\n    tool: { kind: noop }\n    next: [{ step: b, set: { d: "{{ ${DEEP} }}" } }]\n  - step: b\n    tool: { kind: noop }\n`, 'start.next[0].set.d'],
  ])('%s: the start is 200 and the run fails with template_error naming the field, no 500', async (path, workflow, field) => {
    await s.register(playbook(path, workflow));
    const started = await http(s.url, 'POST', '/api/run/playbook', { path, payload: {} });
    expect(started.status).toBe(200);
    const final = await s.wait(started.body.execution_id, 60_000);
    expect(final).toMatchObject({ status: 'failed', error: { code: 'template_error', step: 'start' } });
    expect(final.error.message).toBe(`template error in ${field}: the value nests more than 128 levels`);
    expect(s.logs.filter((l) => /"level":50/.test(l))).toEqual([]);
  });
});
