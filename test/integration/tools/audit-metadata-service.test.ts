// A cloud machine's metadata service (169.254.169.254 and its kin) answers anyone on the machine
// with the machine's identity: a service account token (GCP: GET .../service-accounts/default/token
// with Metadata-Flavor: Google), an AWS role's keys. On a worker that identity is the worker's,
// which docs/agents.md keeps from the endpoints a playbook names, yet an http task (or an mcp
// endpoint, or a redirect from a server the task called) reached it as any URL: the playbook's
// author got the worker's cloud identity in the task's result. No request a playbook aims connects
// there now, by literal address (any spelling the URL parser reads as one) or by a name resolving there.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { http as httpTool } from '../../../src/worker/tools/http.ts';
import { mcp } from '../../../src/worker/tools/mcp.ts';
import { guardedLookup } from '../../../src/worker/tools/metadata-guard.ts';
import type { ToolContext } from '../../../src/worker/tools/types.ts';
import { startHttpTarget, type HttpTarget } from '../../helpers/http-target.ts';

let target: HttpTarget;
beforeAll(async () => {
  // /to-metadata redirects (302) to the GCP token URL, as a hostile or compromised server could.
  target = await startHttpTarget((req, res) => {
    if (req.url?.startsWith('/to-metadata')) {
      res.writeHead(req.url.includes('307') ? 307 : 302, { location: 'http://169.254.169.254/computeMetadata/v1/instance/service-accounts/default/token' });
      res.end();
    }
  });
});
afterAll(async () => target?.close());

// Bounded: before the guard a request went out (and, where nothing answers there, waited).
const ctx = (): ToolContext => ({ signal: AbortSignal.timeout(5_000), env: {} });

describe('requests a playbook aims never reach a cloud metadata service', () => {
  it.each([
    ['the GCP token URL', 'http://169.254.169.254/computeMetadata/v1/instance/service-accounts/default/token'],
    ['the same address written as one number', 'http://2852039166/latest/meta-data/iam/security-credentials/'],
    ['an IPv4-mapped IPv6 address', 'http://[::ffff:169.254.169.254]/latest/meta-data/'],
    ["ECS's task metadata", 'http://169.254.170.2/v2/credentials/x'],
    ["AWS's IPv6 metadata address", 'http://[fd00:ec2::254]/latest/meta-data/'],
    ['an IPv6 link-local address', 'http://[fe80::a9fe:a9fe]/'],
  ])('an http task to %s fails as connection, naming why, without connecting', async (_what, url) => {
    const outcome = await httpTool({ name: 't', kind: 'http', url, headers: { 'Metadata-Flavor': 'Google' } }, ctx());
    expect(outcome).toMatchObject({ status: 'error', error: { code: 'connection' } });
    expect(outcome.error?.message).toMatch(/link-local address|cloud metadata address/);
  });

  it.each([302, 307])('an http task redirected (%i) there by the server it called stops at the redirect', async (status) => {
    const before = target.requests.length;
    const outcome = await httpTool({ name: 't', kind: 'http', url: `${target.url}/to-metadata-${status}` }, ctx());
    expect(outcome).toMatchObject({ status: 'error', error: { code: 'connection' } });
    expect(outcome.error?.message).toMatch(/link-local address/);
    expect(target.requests.length).toBe(before + 1);
  });

  it('an mcp endpoint there is not reached (a redirect there the SDK itself does not follow: another origin)', async () => {
    const outcome = await mcp({ name: 't', kind: 'mcp', endpoint: 'http://169.254.169.254/mcp', method: 'tools/list' }, ctx());
    expect(outcome).toMatchObject({ status: 'error', error: { code: 'connection' } });
    expect(outcome.error?.message).toMatch(/link-local address/);
  });

  it('a name is resolved without the refused addresses; one resolving only to them fails naming why', async () => {
    const lookup = (name: string) =>
      new Promise<{ err: NodeJS.ErrnoException | null; addresses: unknown }>((resolve) => guardedLookup(name, { all: true }, (err, addresses) => resolve({ err, addresses })));
    const refused = await lookup('169.254.169.254');
    expect(refused.err?.code).toBe('EADDRNOTAVAIL');
    expect(refused.err?.message).toMatch(/link-local address/);
    const local = await lookup('localhost');
    expect(local.err).toBeNull();
    expect(local.addresses).toEqual(expect.arrayContaining([expect.objectContaining({ address: expect.stringMatching(/^(127\.0\.0\.1|::1)$/) })]));
  });

  it('other addresses, loopback included, are reached as before', async () => {
    const outcome = await httpTool({ name: 't', kind: 'http', url: `${target.url.replace('127.0.0.1', 'localhost')}/echo` }, ctx());
    expect(outcome).toMatchObject({ status: 'ok', data: { status: 200 } });
  });
});
