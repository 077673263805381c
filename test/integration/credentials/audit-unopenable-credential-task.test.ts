// A credential no configured key opens (an old key dropped before `svc rekey` finished, a server
// of a rolling restart that lacks the new key, a changed row). The API answered only `credential
// data cannot be opened with the configured keys`, and a task naming it failed with `credential
// 'x' could not be fetched`, the words of a server that did not answer: nothing said which key
// was missing or that the row was damaged. Both now say which, naming the credential.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createKeyring } from '../../../src/crypto/keyring.ts';
import { credentialAad, keychainAad, seal, sealedKeyId } from '../../../src/crypto/seal.ts';
import { http } from '../../helpers/http.ts';
import { startHttpTarget, type HttpTarget } from '../../helpers/http-target.ts';
import { startWorkerStack, type WorkerStack } from '../../helpers/worker-process.ts';

let stack: WorkerStack;
let target: HttpTarget;
const otherRing = createKeyring(randomBytes(32), []);

beforeAll(async () => {
  stack = await startWorkerStack();
  target = await startHttpTarget();
});
afterAll(async () => {
  await target?.close();
  await stack?.close();
});

const store = async (name: string) => {
  const res = await http(stack.url, 'POST', '/api/credentials', { name, type: 'bearer', data: { token: `token-of-${name}` } });
  expect(res.status).toBe(201);
};
const sealedOf = async (name: string) =>
  (await stack.deps.db.query<{ data_encrypted: string }>('SELECT data_encrypted FROM core.credential WHERE name = $1', [name])).rows[0].data_encrypted;

async function runWith(auth: string) {
  const path = `audit/unopenable_${randomBytes(4).toString('hex')}`;
  await stack.register(
    [
      'apiVersion: svc/v1',
      'kind: Playbook',
      `metadata: { name: unopenable, path: ${path} }`,
      'workflow:',
      '  - step: start',
      '    tool:',
      '      - name: call',
      '        kind: http',
      `        url: ${JSON.stringify(`${target.url}/hello`)}`,
      `        auth: ${auth}`,
    ].join('\n') + '\n',
  );
  return stack.wait(await stack.run(path), 30_000);
}

it('one sealed with a key the server lacks: the answer and the task name the credential and the key id', async () => {
  await store('elsewhere_auth');
  const foreign = seal(otherRing, { token: 'sealed-elsewhere' }, credentialAad('elsewhere_auth'));
  await stack.deps.db.query('UPDATE core.credential SET data_encrypted = $2 WHERE name = $1', ['elsewhere_auth', foreign]);
  const kid = sealedKeyId(foreign);

  const res = await http(stack.url, 'GET', '/api/credentials/elsewhere_auth?include_data=true');
  expect(res.status).toBe(409);
  expect(res.body.detail).toContain("'elsewhere_auth'");
  expect(res.body.detail).toContain(`key id ${kid}`);
  expect(res.body.detail).toContain('SVC_ENCRYPTION_KEYS_OLD');

  const done = await runWith('elsewhere_auth');
  expect(done.status).toBe('failed');
  expect(done.error.code).toBe('credential_unavailable');
  expect(done.error.message).toContain("'elsewhere_auth'");
  expect(done.error.message).toContain(`key id ${kid}`);
  expect(target.requests).toHaveLength(0);
});

it('one whose stored text was changed: a clear refusal naming it, never a 500 or garbage', async () => {
  await store('changed_auth');
  const sealed = await sealedOf('changed_auth');
  const parts = sealed.split('.');
  // One character of the ciphertext, still valid base64url.
  parts[3] = (parts[3][0] === 'A' ? 'B' : 'A') + parts[3].slice(1);
  await stack.deps.db.query('UPDATE core.credential SET data_encrypted = $2 WHERE name = $1', ['changed_auth', parts.join('.')]);

  const res = await http(stack.url, 'GET', '/api/credentials/changed_auth?include_data=true');
  expect(res.status).toBe(409);
  expect(res.body.detail).toContain("'changed_auth'");
  expect(res.body.detail).toMatch(/changed|damaged/);
  expect(JSON.stringify(res.body)).not.toContain('token-of-changed_auth');

  const done = await runWith('changed_auth');
  expect(done.status).toBe('failed');
  expect(done.error.message).toContain("'changed_auth'");
  expect(done.error.message).toMatch(/changed|damaged/);
});

it('a keychain entry sealed with a key the server lacks: the answer names the key id', async () => {
  const { rows } = await stack.deps.db.query<{ catalog_id: number }>(
    `INSERT INTO core.catalog (path, version, content, payload) VALUES ('audit/unopenable_kc', 1, 'x', '{}') RETURNING catalog_id`,
  );
  const catalogId = rows[0].catalog_id;
  const stored = await http(stack.url, 'POST', `/api/keychain/${catalogId}/tok`, { token_data: { access_token: 'kc-sealed-elsewhere' }, credential_type: 'bearer' });
  expect(stored.status).toBe(201);
  const cacheKey = `tok:${catalogId}:global`;
  const foreign = seal(otherRing, { access_token: 'kc-sealed-elsewhere' }, keychainAad(cacheKey));
  await stack.deps.db.query('UPDATE core.keychain SET data_encrypted = $2 WHERE cache_key = $1', [cacheKey, foreign]);

  const res = await http(stack.url, 'GET', `/api/keychain/${catalogId}/tok`);
  expect(res.status).toBe(409);
  expect(res.body.detail).toContain(`key id ${sealedKeyId(foreign)}`);
  expect(JSON.stringify(res.body)).not.toContain('kc-sealed-elsewhere');
});
