// An abstract Unix socket (`@name` in /proc/net/unix) has no file: the sandbox's view of the file
// system hides none, and it belongs to the network namespace. docs/operations.md ("The shell
// sandbox", Network) said what a task with the host's network reaches (its loopback) but not these,
// which no permission guards; here a service of this machine on one: a task with the host's network
// (the default) reaches it, one with SVC_SHELL_NETWORK=false or external does not.
import { once } from 'node:events';
import { createServer, type Server } from 'node:net';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { probeShellSandbox } from '../../../src/worker/tools/probe-shell-sandbox.ts';
import { runShell } from '../../../src/worker/tools/shell.ts';
import { DEFAULT_SHELL_SETTINGS } from '../../../src/worker/tools/shell-settings.ts';
import type { ShellNetwork } from '../../../src/config.ts';

const name = `svc-audit-${randomBytes(6).toString('hex')}`;
let server: Server;

beforeAll(async () => {
  server = createServer((socket) => socket.end('host-service\n'));
  server.listen(`\0${name}`);
  await once(server, 'listening');
});
afterAll(async () => new Promise((resolve) => server?.close(resolve)));

// Connects to the abstract socket and prints what came back, or the error's name.
const connect = `python3 -c "import socket
s = socket.socket(socket.AF_UNIX)
try:
    s.connect(b'\\\\0${name}'); print(s.recv(100).decode().strip())
except OSError as e:
    print(type(e).__name__)"`;

async function reach(network: ShellNetwork): Promise<string> {
  const host = await probeShellSandbox({ ...DEFAULT_SHELL_SETTINGS, network });
  expect(host.unavailable).toBeUndefined();
  const outcome = await runShell(host, { command: connect, env: {} }, AbortSignal.timeout(30_000));
  expect(outcome.status, JSON.stringify(outcome)).toBe('ok');
  const data = outcome.data;
  return typeof data === 'object' && data !== null && 'stdout' in data ? String(data.stdout) : '';
}

describe("a sandboxed shell task and this machine's abstract Unix sockets", () => {
  it("reaches them with the host's network, as docs/operations.md says", async () => {
    expect(await reach('host')).toBe('host-service\n');
  });

  it('reaches none with SVC_SHELL_NETWORK=false or external', async () => {
    expect(await reach('none')).toBe('ConnectionRefusedError\n');
    expect(await reach('external')).toBe('ConnectionRefusedError\n');
  });
});
