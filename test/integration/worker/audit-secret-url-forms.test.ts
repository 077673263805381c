// A secret an http task puts in its URL is masked in the task's error as the URL parser wrote it: a
// real `svc worker` runs tasks whose URL holds a keychain token in its host name (which the parser
// lower-cases; DNS fails) and a keychain password with a space, quotes and braces in its path (which
// the parser percent-encodes, not as encodeURIComponent does; the connection is refused). Neither
// the token nor the password, in any form, is in the events, the execution or the step's runs.
import { createServer } from 'node:http';
import { once } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SECRET_MASK } from '../../../src/credential/redact-secrets.ts';
import { http } from '../../helpers/http.ts';
import { startWorkerStack, type WorkerStack } from '../../helpers/worker-process.ts';

const HOST_TOKEN = 'Host-Token-5C1D';
const PATH_PASSWORD = 'pass word "{9f}" Ωx';

let s: WorkerStack;
let refused: string;
beforeAll(async () => {
  s = await startWorkerStack({ workers: 1 });
  // A port nothing listens on: a server started and closed again.
  const probe = createServer().listen(0, '127.0.0.1');
  await once(probe, 'listening');
  const address = probe.address();
  if (address === null || typeof address === 'string') throw new Error('no TCP address');
  await new Promise((resolve) => probe.close(resolve));
  refused = `http://127.0.0.1:${address.port}`;
}, 120_000);
afterAll(async () => s?.close());

describe('a secret in an http task URL', () => {
  it('is masked in the connection error as the URL parser wrote it: a lower-cased host, a percent-encoded path', async () => {
    const registered = await s.register(`
apiVersion: svc/v1
kind: Playbook
metadata: { name: url-forms, path: masking/url-forms }
workflow:
  - step: start
    tool: { name: host, kind: http, url: "http://{{ keychain.tok.access_token }}.invalid/x" }
    next: [ { step: path, when: "{{ true }}" } ]
  - step: path
    tool: { name: path, kind: http, url: "${refused}/login/{{ keychain.tok.password }}" }
`);
    const stored = await http(s.url, 'POST', `/api/keychain/${registered.catalog_id}/tok`, {
      token_data: { access_token: HOST_TOKEN, password: PATH_PASSWORD },
      credential_type: 'bearer',
      cache_type: 'secret',
      scope_type: 'global',
      ttl_seconds: 3600,
    });
    expect(stored.status).toBeLessThan(300);
    const id = await s.run('masking/url-forms');
    const execution = await s.wait(id, 30_000);
    expect(execution.status).toBe('failed');
    const runs = await Promise.all(['start', 'path'].map(async (step) => (await http(s.url, 'GET', `/api/executions/${id}/steps/${step}`)).body));
    const text = JSON.stringify([await s.events(id), execution, runs]);

    const forms = [HOST_TOKEN, HOST_TOKEN.toLowerCase(), PATH_PASSWORD, new URL(`http://h/${PATH_PASSWORD}`).pathname.slice(1), 'pass%20word'];
    for (const form of forms) expect(text.includes(form), `holds ${form}`).toBe(false);
    // The tasks did fail on what the URLs named, and said so with the mask in place.
    expect(text).toContain(`GET http://${SECRET_MASK}.invalid/x failed`);
    expect(text).toContain(`GET ${refused}/login/${SECRET_MASK} failed`);
  });
});
