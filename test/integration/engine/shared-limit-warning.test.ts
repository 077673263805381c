// A parent and the child its `playbook` task starts on one concurrency limit deadlock once the
// parents hold every slot of a key: each parent waits for its child, queued for a slot its parent
// holds. Registration says so (the playbook is stored either way), for a child in the catalog
// and for a playbook that starts itself; a child on another limit, or none, is no warning.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { http } from '../../helpers/http.ts';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t?.close();
});

const playbook = (path: string, concurrency: string, child?: string) => `apiVersion: svc/v1
metadata: { name: shared, path: ${path} }
${concurrency}
workflow:
  - step: start
${child ? `    tool: { name: kid, kind: playbook, path: ${child}, args: { tenant: "{{ workload.tenant }}" } }` : '    wait: { for: 1s }'}
`;

async function register(content: string): Promise<string[]> {
  const res = await http(t.url, 'POST', '/api/catalog/playbook', { content });
  expect(res.status).toBe(201);
  return res.body.warnings;
}

it("warns when a playbook task's child takes a slot of the parent's own concurrency limit", async () => {
  await register(playbook('shared/child', 'concurrency: { limit: tenant, key: "{{ args.tenant }}" }'));
  await register(playbook('shared/other-child', 'concurrency: { limit: partner, key: "{{ args.tenant }}" }'));
  await register(playbook('shared/free-child', ''));

  const warned = await register(playbook('shared/parent', 'concurrency: { limit: tenant, key: "{{ workload.tenant }}" }', 'shared/child'));
  expect(warned).toContainEqual(expect.stringMatching(/^workflow\[0\]\.tool: its child shared\/child takes a slot of concurrency limit tenant, as this playbook does: .*waits for a slot its parent holds, for ever/));

  for (const child of ['shared/other-child', 'shared/free-child', 'shared/not-registered-yet']) {
    const warnings = await register(playbook(`shared/parent-of-${child.split('/')[1]}`, 'concurrency: { limit: tenant, key: "{{ workload.tenant }}" }', child));
    expect(warnings.filter((w) => w.includes('takes a slot'))).toEqual([]);
  }
  // A parent on no limit holds no slot its child could wait for.
  expect((await register(playbook('shared/unlimited-parent', '', 'shared/child'))).filter((w) => w.includes('takes a slot'))).toEqual([]);
});

it('warns when a playbook that starts itself has an inline concurrency limit', async () => {
  const warned = await register(playbook('shared/recursive', 'concurrency: { limit: 2, key: "{{ workload.tenant }}" }', 'shared/recursive'));
  expect(warned).toContainEqual(expect.stringContaining("its child shared/recursive takes a slot of this playbook's own concurrency limit (@shared/recursive)"));
});
