// A real nats-server (Debian's, installed by scripts/ensure-package.sh when missing) on a free
// loopback port, with an optional user and password, for tests of NATS credentials.
import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import net from 'node:net';
import { join } from 'node:path';
import { until } from './until.ts';

export type NatsServer = { url: string; port: number; close(): Promise<void> };

let binary: string | undefined;

/** Path of nats-server, installed the first time it is missing. */
export function natsServerPath(): string {
  binary ??= execFileSync('bash', [join(import.meta.dirname, '../../scripts/ensure-package.sh'), 'nats-server', 'nats-server', 'the NATS tests'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] }).trim();
  return binary;
}

async function freePort(): Promise<number> {
  const server = net.createServer().listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  server.close();
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

/** Starts nats-server on 127.0.0.1 and waits until it accepts connections. */
export async function startNatsServer(auth?: { user: string; password: string }): Promise<NatsServer> {
  const port = await freePort();
  const args = ['-a', '127.0.0.1', '-p', String(port), ...(auth ? ['--user', auth.user, '--pass', auth.password] : [])];
  const child = spawn(natsServerPath(), args, { stdio: 'ignore' });
  await until(
    'nats-server accepting connections',
    () =>
      new Promise<boolean>((resolve) => {
        const socket = net.connect({ host: '127.0.0.1', port }, () => {
          socket.destroy();
          resolve(true);
        });
        socket.on('error', () => resolve(false));
      }),
    10_000,
  );
  return {
    url: `nats://127.0.0.1:${port}`,
    port,
    async close() {
      if (child.exitCode === null) {
        child.kill('SIGTERM');
        await once(child, 'exit');
      }
    },
  };
}
