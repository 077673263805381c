// Keychain cleanup at completion through real runs: a parent playbook starts a child playbook
// (`kind: playbook`); the worker creates their entries from a real token server; the engine's own
// completion write removes a `local` entry when its execution ends and `shared` ones when the root
// ends. Gates (HTTP calls the test holds open) pause each execution where the test looks.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHttpTarget, DEFAULT_CLIENT_ID, DEFAULT_CLIENT_SECRET, type HttpTarget } from '../../helpers/http-target.ts';
import { http, type Json } from '../../helpers/http.ts';
import { startTestStack, type TestStack } from '../../helpers/stack.ts';

type Deferred = { promise: Promise<void>; resolve(): void };
function deferred(): Deferred {
  let resolve = (): void => {};
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

let s: TestStack;
let target: HttpTarget;
/** Per gate name: when a task reached it, and the test's go-ahead. */
const gates = new Map<string, { arrived: Deferred; release: Deferred }>();
function gate(name: string): { arrived: Deferred; release: Deferred } {
  let g = gates.get(name);
  if (!g) gates.set(name, (g = { arrived: deferred(), release: deferred() }));
  return g;
}

beforeAll(async () => {
  target = await startHttpTarget(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://target');
    if (url.pathname !== '/gate') return;
    const g = gate(url.searchParams.get('name') ?? '');
    g.arrived.resolve();
    await g.release.promise;
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ released: true }));
  });
  s = await startTestStack({ workers: 1, concurrency: 4 });
  const cred = await http(s.url, 'POST', '/api/credentials', {
    name: 'cleanup_client_auth',
    type: 'oauth2',
    data: { client_id: DEFAULT_CLIENT_ID, client_secret: DEFAULT_CLIENT_SECRET, token_url: `${target.url}/token` },
  });
  expect(cred.status).toBe(201);
}, 120_000);
afterAll(async () => {
  for (const g of gates.values()) g.release.resolve(); // never leave a task hanging on a failed test
  await s?.close();
  await target?.close();
});

/** A task that calls the protected endpoint with an entry's token (it fails when the entry is empty). */
const useEntry = (entry: string) => `      - name: use_${entry}
        kind: http
        url: "{{ workload.base }}/protected"
        headers: { Authorization: "Bearer {{ keychain.${entry}.access_token }}" }
`;
const holdAt = (name: string) => `      - { name: hold, kind: http, url: "{{ workload.base }}/gate?name=${name}" }
`;

const CHILD = () => `
apiVersion: svc/v1
kind: Playbook
metadata: { name: kcc_child, path: kcc/child }
workload: { base: "${target.url}" }
keychain:
  - { name: sh, kind: oauth2, scope: shared, auth: cleanup_client_auth }
  - { name: lo, kind: oauth2, scope: local, auth: cleanup_client_auth }
  - { name: gl, kind: oauth2, scope: global, auth: cleanup_client_auth }
workflow:
  - step: start
    tool:
${useEntry('sh')}${useEntry('lo')}${useEntry('gl')}    next: wait
  - step: wait
    tool:
${holdAt('child')}`;

const PARENT = () => `
apiVersion: svc/v1
kind: Playbook
metadata: { name: kcc_parent, path: kcc/parent }
workload: { base: "${target.url}" }
keychain:
  - { name: psh, kind: oauth2, scope: shared, auth: cleanup_client_auth }
workflow:
  - step: start
    tool:
${useEntry('psh')}      - { name: sub, kind: playbook, path: kcc/child }
    next: wait
  - step: wait
    tool:
${holdAt('parent')}`;

const status = async (id: number): Promise<string> => (await http(s.url, 'GET', `/api/executions/${id}`)).body.status;
const readEntry = async (catalogId: number, name: string, scope: string, executionId: number): Promise<Json> =>
  (await http(s.url, 'GET', `/api/keychain/${catalogId}/${name}?scope_type=${scope}&execution_id=${executionId}`)).body;
const storedKeys = async (): Promise<string[]> =>
  (await s.deps.db.query<{ cache_key: string }>('SELECT cache_key FROM core.keychain ORDER BY cache_key')).rows.map((r) => r.cache_key);

async function childOf(parentId: number): Promise<number> {
  for (let i = 0; i < 400; i++) {
    const started = (await s.events(parentId)).find((e: Json) => e.event_type === 'child.started');
    if (started) return started.context.child_execution_id;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`execution ${parentId} started no child`);
}

describe('keychain cleanup when executions finish (parent and child playbooks)', () => {
  it("a child's local entry goes with the child; shared entries (the child's and the parent's) last until the root ends; global ones stay", async () => {
    const child = await s.register(CHILD());
    const parent = await s.register(PARENT());
    const [childCatalog, parentCatalog] = [child.catalog_id, parent.catalog_id];
    const tokensBefore = target.issuedTokens.length;

    const rootId = await s.run('kcc/parent');
    const childId = await childOf(rootId);
    expect(childId).not.toBe(rootId);

    // The child holds at its gate: it made its three entries and used them; the parent's is there too.
    await gate('child').arrived.promise;
    expect(target.issuedTokens.length - tokensBefore).toBe(4);
    const localKey = `lo:${childCatalog}:${childId}`;
    const childSharedKey = `sh:${childCatalog}:shared:${rootId}`;
    const parentSharedKey = `psh:${parentCatalog}:shared:${rootId}`;
    const globalKey = `gl:${childCatalog}:global`;
    expect(await storedKeys()).toEqual([globalKey, localKey, parentSharedKey, childSharedKey].sort());
    expect(await readEntry(childCatalog, 'lo', 'local', childId)).toMatchObject({ status: 'success', cache_key: localKey });
    // The child's shared entry is keyed by the root: the parent reads the very same one.
    expect(await readEntry(childCatalog, 'sh', 'shared', rootId)).toMatchObject({ status: 'success', cache_key: childSharedKey });
    expect(await status(rootId)).toBe('running');
    expect(await status(childId)).toBe('running');

    // The child finishes while the parent is still running (it holds at its own gate).
    gate('child').release.resolve();
    await gate('parent').arrived.promise;
    expect((await s.wait(childId)).status).toBe('completed');
    expect(await status(rootId)).toBe('running');
    expect(await readEntry(childCatalog, 'lo', 'local', childId)).toMatchObject({ status: 'not_found', cache_key: localKey });
    expect(await readEntry(childCatalog, 'sh', 'shared', childId)).toMatchObject({ status: 'success', cache_key: childSharedKey });
    expect(await readEntry(parentCatalog, 'psh', 'shared', rootId)).toMatchObject({ status: 'success', cache_key: parentSharedKey });
    expect(await storedKeys()).toEqual([globalKey, parentSharedKey, childSharedKey].sort());

    // The root finishes: both shared entries go with it; the global one stays.
    gate('parent').release.resolve();
    expect((await s.wait(rootId)).status).toBe('completed');
    expect(await storedKeys()).toEqual([globalKey]);
    expect(await readEntry(childCatalog, 'sh', 'shared', rootId)).toMatchObject({ status: 'not_found' });
    expect(await readEntry(parentCatalog, 'psh', 'shared', rootId)).toMatchObject({ status: 'not_found' });
    expect((await http(s.url, 'GET', `/api/keychain/${childCatalog}/gl`)).body.status).toBe('success');
  });
});
