// SVC_SHELL_NETWORK=external is documented as "other machines only", but pasta connects a task to
// any address it names, this machine's own among them: a service listening on all addresses
// (0.0.0.0) answered a task at the machine's other addresses (a docker0 bridge, a second
// interface; here one added to lo), through namespaces made ahead and pasta of a task's own alike.
import { execFileSync } from 'node:child_process';
import { once } from 'node:events';
import { createServer, type Server } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { probeShellSandbox } from '../../../src/worker/tools/probe-shell-sandbox.ts';
import { runShell } from '../../../src/worker/tools/shell.ts';
import type { ShellHost } from '../../../src/worker/tools/shell-argv.ts';
import { DEFAULT_SHELL_SETTINGS } from '../../../src/worker/tools/shell-settings.ts';

// TEST-NET-2: routed nowhere; only this machine answers it while the test holds it.
const ADDRESS = '198.51.100.77';
const isRoot = process.getuid?.() === 0;
let host: ShellHost;
let server: Server;
let port = 0;
let accepted = 0;
let added = false;

beforeAll(async () => {
  host = await probeShellSandbox({ ...DEFAULT_SHELL_SETTINGS, network: 'external' });
  server = createServer((socket) => {
    accepted++;
    socket.end('host-service\n');
  });
  server.listen(0, '0.0.0.0');
  await once(server, 'listening');
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no TCP address');
  port = address.port;
}, 60_000);

afterAll(async () => {
  if (added) execFileSync('ip', ['addr', 'del', `${ADDRESS}/32`, 'dev', 'lo']);
  await new Promise((resolve) => server?.close(resolve));
});

// Connects to the machine's service at `address`; says what came back, or why nothing did.
const connect = (address: string) => `bash -c 'exec 3<>/dev/tcp/${address}/${port} && head -1 <&3' 2>&1 || echo refused`;

async function task(on: ShellHost, command: string): Promise<string> {
  const outcome = await runShell(on, { command, env: {} }, AbortSignal.timeout(30_000));
  expect(outcome.status, JSON.stringify(outcome)).toBe('ok');
  const data = outcome.data;
  return typeof data === 'object' && data !== null && 'stdout' in data ? String(data.stdout) : '';
}

describe.runIf(isRoot)('a shell task with SVC_SHELL_NETWORK=external and a service of this machine on all its addresses', () => {
  it('reaches it at none of the machine\'s addresses, one added after the namespace was made too', async () => {
    expect(host.unavailable).toBeUndefined();
    // A namespace made (and lent) before the address exists: it is made again for the next task.
    expect(await task(host, 'ip route | grep -c default')).toBe('1\n');
    execFileSync('ip', ['addr', 'add', `${ADDRESS}/32`, 'dev', 'lo']);
    added = true;
    const namespaced = await task(host, `${connect(ADDRESS)}; ip route | grep -c default`);
    expect(namespaced).toMatch(/Permission denied/);
    expect(namespaced).toMatch(/refused\n1\n$/);
    // Without nsenter each task has pasta of its own: fenced the same way.
    const own = await task({ ...host, nsenter: undefined }, connect(ADDRESS));
    expect(own).toMatch(/Permission denied[\s\S]*refused\n$/);
    expect(accepted).toBe(0);
  }, 90_000);
});
