// secret_manager keychain entries against a local fake of the three providers' REST APIs:
// Google Secret Manager (`GET /v1/{name}:access`), AWS Secrets Manager (`POST /` with
// X-Amz-Target: secretsmanager.GetSecretValue) and Azure Key Vault (`GET /secrets/{name}?api-version=7.4`).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_CLIENT_ID, DEFAULT_CLIENT_SECRET, startHttpTarget, type HttpTarget } from '../../helpers/http-target.ts';
import { http, type Json } from '../../helpers/http.ts';
import { startTestStack, type TestStack } from '../../helpers/stack.ts';

const GCP_TOKEN = 'gcp-access-token-for-tests';
const AWS_KEY = 'aws-api-key-for-tests';
const SECRETS: Record<string, string> = {
  'projects/demo/secrets/db_password/versions/latest': 'gcp-db-password-value',
  'projects/demo/secrets/rotating/versions/latest': 'gcp-rotating-value',
  'prod/api-key': 'aws-api-key-value',
  'storage-conn': 'azure-connection-string-value',
};

let s: TestStack;
let provider: HttpTarget;
const providerCalls: { provider: string; secret: string }[] = [];

beforeAll(async () => {
  provider = await startHttpTarget(async (req, res, recorded) => {
    const url = new URL(req.url ?? '/', 'http://provider');
    const answer = (status: number, body: unknown): void => {
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    };
    const bearer = (req.headers.authorization ?? '').replace(/^Bearer /, '');
    const gcp = /^\/v1\/(.+):access$/.exec(url.pathname);
    if (req.method === 'GET' && gcp) {
      const name = decodeURIComponent(gcp[1]);
      providerCalls.push({ provider: 'gcp', secret: name });
      if (bearer !== GCP_TOKEN) return answer(401, { error: { code: 401, status: 'UNAUTHENTICATED' } });
      if (!(name in SECRETS)) return answer(404, { error: { code: 404, status: 'NOT_FOUND' } });
      return answer(200, { name, payload: { data: Buffer.from(SECRETS[name]).toString('base64'), dataCrc32c: '0' } });
    }
    if (req.method === 'POST' && url.pathname === '/' && req.headers['x-amz-target'] === 'secretsmanager.GetSecretValue') {
      const request: unknown = JSON.parse(recorded.body);
      const SecretId = typeof request === 'object' && request !== null && 'SecretId' in request && typeof request.SecretId === 'string' ? request.SecretId : '';
      providerCalls.push({ provider: 'aws', secret: SecretId });
      if (bearer !== AWS_KEY) return answer(400, { __type: 'UnrecognizedClientException' });
      if (!(SecretId in SECRETS)) return answer(400, { __type: 'ResourceNotFoundException' });
      return answer(200, { ARN: `arn:aws:secretsmanager:us-east-1:1:secret:${SecretId}`, Name: SecretId, SecretString: SECRETS[SecretId] });
    }
    const azure = /^\/secrets\/([^/]+)$/.exec(url.pathname);
    if (req.method === 'GET' && azure && url.searchParams.get('api-version') === '7.4') {
      const name = decodeURIComponent(azure[1]);
      providerCalls.push({ provider: 'azure', secret: name });
      if (!provider.issuedTokens.includes(bearer)) return answer(401, { error: { code: 'Unauthorized' } });
      if (!(name in SECRETS)) return answer(404, { error: { code: 'SecretNotFound' } });
      return answer(200, { value: SECRETS[name], id: `${provider.url}/secrets/${name}/1` });
    }
  });
  s = await startTestStack({ workers: 1, concurrency: 4 });
  const credentials = [
    { name: 'gcp_sm_auth', type: 'bearer', data: { token: GCP_TOKEN } },
    { name: 'aws_sm_auth', type: 'api_key', data: { key: AWS_KEY } },
    // Azure: a client-credentials credential; the worker gets its token from the fake's /token.
    { name: 'azure_sm_auth', type: 'oauth2', data: { client_id: DEFAULT_CLIENT_ID, client_secret: DEFAULT_CLIENT_SECRET, token_url: `${provider.url}/token` } },
  ];
  for (const c of credentials) expect((await http(s.url, 'POST', '/api/credentials', c)).status).toBeLessThan(300);
}, 120_000);
afterAll(async () => {
  await s?.close();
  await provider?.close();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function runYaml(yaml: string): Promise<{ path: string; catalogId: number; run: () => Promise<{ id: number; final: Json; events: Json[] }> }> {
  const reg = await s.register(yaml);
  return {
    path: reg.path,
    catalogId: reg.catalog_id,
    run: async () => {
      const id = await s.run(reg.path);
      const final = await s.wait(id);
      return { id, final, events: await s.events(id) };
    },
  };
}

describe('secret_manager keychain entries', () => {
  it('reads mapped secrets from gcp, aws and azure once, stores them as secrets, and reuses them', async () => {
    const pb = await runYaml(`
apiVersion: svc/v1
kind: Playbook
metadata: { name: kcw_sm, path: kcw/secret-manager }
workload: { base: "${provider.url}" }
keychain:
  - { name: gcp_secrets, kind: secret_manager, provider: gcp, scope: global, auth: gcp_sm_auth, endpoint: "{{ workload.base }}",
      map: { password: projects/demo/secrets/db_password } }
  - { name: aws_secrets, kind: secret_manager, provider: aws, scope: global, auth: aws_sm_auth, endpoint: "{{ workload.base }}",
      map: { key: prod/api-key } }
  - { name: azure_secrets, kind: secret_manager, provider: azure, scope: local, auth: azure_sm_auth, endpoint: "{{ workload.base }}",
      map: { conn: storage-conn } }
workflow:
  - step: start
    tool:
      - name: call
        kind: http
        method: GET
        url: "{{ workload.base }}/status/200"
        headers:
          X-Gcp: "{{ keychain.gcp_secrets.password }}"
          X-Aws: "{{ keychain.aws_secrets.key }}"
          X-Azure: "{{ keychain.azure_secrets.conn }}"
`);
    const first = await pb.run();
    expect(first.final.status).toBe('completed');
    const sent = provider.requests.filter((r) => r.path === '/status/200').at(-1);
    expect(sent?.headers['x-gcp']).toBe('gcp-db-password-value');
    expect(sent?.headers['x-aws']).toBe('aws-api-key-value');
    expect(sent?.headers['x-azure']).toBe('azure-connection-string-value');
    expect(providerCalls.map((c) => c.provider).sort()).toEqual(['aws', 'azure', 'gcp']);
    const awsCall = provider.requests.find((r) => r.headers['x-amz-target'] === 'secretsmanager.GetSecretValue');
    expect(awsCall?.headers['content-type']).toBe('application/x-amz-json-1.1');

    const list = await http(s.url, 'GET', `/api/keychain/catalog/${pb.catalogId}`);
    // The local azure entry went away with its execution; the global ones remain.
    expect(list.body.entries.map((e: Json) => [e.keychain_name, e.credential_type, e.scope_type])).toEqual([
      ['aws_secrets', 'secret_manager', 'global'],
      ['gcp_secrets', 'secret_manager', 'global'],
    ]);
    const gcpEntry = await http(s.url, 'GET', `/api/keychain/${pb.catalogId}/gcp_secrets`);
    expect(gcpEntry.body).toMatchObject({ status: 'success', cache_type: 'secret', auto_renew: false, token_data: { password: 'gcp-db-password-value' } });
    expect(gcpEntry.body.ttl_seconds).toBeGreaterThan(86_000); // the global default TTL

    const second = await pb.run();
    expect(second.final.status).toBe('completed');
    // Global entries were reused; only the local (per-execution) azure entry was read again.
    expect(providerCalls.map((c) => c.provider).sort()).toEqual(['aws', 'azure', 'azure', 'gcp']);
  });

  it('an auto-renewing secret_manager entry is read again from the provider after it expires', async () => {
    const pb = await runYaml(`
apiVersion: svc/v1
kind: Playbook
metadata: { name: kcw_sm_renew, path: kcw/secret-manager-renew }
keychain:
  - { name: rotating, kind: secret_manager, provider: gcp, scope: global, auth: gcp_sm_auth, endpoint: "${provider.url}",
      ttl_seconds: 1, auto_renew: true, map: { value: projects/demo/secrets/rotating/versions/latest } }
workflow:
  - step: start
    tool:
      - { name: call, kind: http, method: GET, url: "${provider.url}/status/200", headers: { X-Value: "{{ keychain.rotating.value }}" } }
`);
    const reads = () => providerCalls.filter((c) => c.secret.includes('rotating')).length;
    expect((await pb.run()).final.status).toBe('completed');
    expect(reads()).toBe(1);
    await sleep(1_300);
    expect((await pb.run()).final.status).toBe('completed');
    expect(reads()).toBe(2);
    expect(s.logs.join('')).toContain(`KEYCHAIN: Entry 'rotating' expired`);
    expect(provider.requests.filter((r) => r.path === '/status/200').at(-1)?.headers['x-value']).toBe('gcp-rotating-value');
    // The re-read value was stored again: a run right after uses it without calling the provider.
    expect((await http(s.url, 'GET', `/api/keychain/${pb.catalogId}/rotating`)).body).toMatchObject({ status: 'success', cache_type: 'secret' });
    expect((await pb.run()).final.status).toBe('completed');
    expect(reads()).toBe(2);
  });

  it('a provider error fails the step; the log names the entry and status, never a value', async () => {
    const pb = await runYaml(`
apiVersion: svc/v1
kind: Playbook
metadata: { name: kcw_sm_bad, path: kcw/secret-manager-bad }
keychain:
  - { name: missing_secret, kind: secret_manager, provider: azure, scope: global, auth: azure_sm_auth, endpoint: "${provider.url}",
      map: { conn: storage-conn, other: no-such-secret } }
workflow:
  - step: start
    tool:
      - { name: call, kind: http, method: GET, url: "${provider.url}/status/200", headers: { X-Conn: "{{ keychain.missing_secret.conn }}" } }
`);
    const run = await pb.run();
    expect(run.final.status).toBe('failed');
    const line = s.logs.find((l) => l.includes(`KEYCHAIN: Failed to create 'missing_secret'`));
    expect(line).toContain(`field 'other'`);
    expect(line).toContain('HTTP 404');
    expect(line).not.toContain('azure-connection-string-value');
    expect((await http(s.url, 'GET', `/api/keychain/${pb.catalogId}/missing_secret`)).body.status).toBe('not_found');

    // A literal provider of no secret manager is refused at registration; a templated one as it renders.
    const literal = await http(s.url, 'POST', '/api/catalog/playbook', {
      content: `apiVersion: svc/v1\nkind: Playbook\nmetadata: { name: kcw_sm_lit, path: kcw/secret-manager-literal }\nkeychain:\n  - { name: odd, kind: secret_manager, provider: oracle, map: { x: y } }\nworkflow: [ { step: start } ]\n`,
    });
    expect(literal.status).toBe(400);
    expect(literal.body.detail.problems).toEqual([expect.objectContaining({ path: 'keychain[0].provider', message: expect.stringMatching(/^must be one of gcp, aws, azure .*got 'oracle'$/), line: 5 })]);
    const odd = await runYaml(`
apiVersion: svc/v1
kind: Playbook
metadata: { name: kcw_sm_odd, path: kcw/secret-manager-odd }
workload: { provider: oracle }
keychain:
  - { name: odd_provider, kind: secret_manager, provider: "{{ workload.provider }}", scope: global, endpoint: "${provider.url}", map: { x: y } }
workflow:
  - step: start
    tool:
      - { name: call, kind: http, method: GET, url: "${provider.url}/status/200", headers: { X-Conn: "{{ keychain.odd_provider.x }}" } }
`);
    expect((await odd.run()).final.status).toBe('failed');
    expect(s.logs.find((l) => l.includes(`KEYCHAIN: Failed to create 'odd_provider'`))).toContain(`provider 'oracle' is not supported`);
  });
});
