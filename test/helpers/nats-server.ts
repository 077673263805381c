// A real nats-server (Debian's, installed by scripts/ensure-package.sh when missing) on a free
// loopback port, with an optional user and password, for tests of NATS credentials; with
// `jetstream`, JetStream on a store in a temporary directory, kept across `restart()`.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './ports.ts';
import { until } from './until.ts';
import { ensurePackage } from '../../scripts/ensure-package.ts';

export type NatsServer = {
  url: string;
  port: number;
  /** The running nats-server's process id (a bench reads its CPU). */
  readonly pid: number;
  /** Stops the server (SIGTERM) and starts it again on the same port and store: JetStream keeps its streams and consumers. */
  restart(): Promise<void>;
  close(): Promise<void>;
};

let binary: string | undefined;

/** Path of nats-server, installed the first time it is missing. */
export function natsServerPath(): string {
  binary ??= ensurePackage('nats-server', 'nats-server', 'the NATS tests');
  return binary;
}


/** Resolves once a nats-server accepts TCP connections on `port` (10 s at most). */
export const accepting = (port: number) =>
  until(
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

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode === null && child.signalCode === null) {
    const exited = once(child, 'exit');
    child.kill('SIGTERM');
    await exited;
  }
}

/** Starts nats-server on 127.0.0.1 (with a user and password or a token, with JetStream when asked) and waits until it accepts connections. */
export async function startNatsServer(auth?: { user: string; password: string } | { token: string }, opts: { jetstream?: boolean } = {}): Promise<NatsServer> {
  const port = await freePort();
  const storeDir = opts.jetstream ? await mkdtemp(join(tmpdir(), 'svc-nats-js-')) : undefined;
  const login = auth === undefined ? [] : 'token' in auth ? ['--auth', auth.token] : ['--user', auth.user, '--pass', auth.password];
  const args = ['-a', '127.0.0.1', '-p', String(port), ...login, ...(storeDir ? ['-js', '-sd', storeDir] : [])];
  const launch = async () => {
    const c = spawn(natsServerPath(), args, { stdio: 'ignore' });
    await accepting(port);
    return c;
  };
  let child = await launch();
  return {
    url: `nats://127.0.0.1:${port}`,
    port,
    get pid() {
      return child.pid!;
    },
    async restart() {
      await stopChild(child);
      child = await launch();
    },
    async close() {
      await stopChild(child);
      if (storeDir) await rm(storeDir, { recursive: true, force: true });
    },
  };
}

/** A JetStream server for a test file: the one SVC_TEST_NATS_URL names (never restarted nor closed), else a nats-server of its own. */
export async function jetStreamServer(): Promise<{ url: string; own: NatsServer | undefined; close(): Promise<void> }> {
  const external = process.env.SVC_TEST_NATS_URL;
  if (external) return { url: external, own: undefined, close: async () => {} };
  const own = await startNatsServer(undefined, { jetstream: true });
  return { url: own.url, own, close: () => own.close() };
}

export type NatsProxy = {
  /** nats://127.0.0.1:<port>, forwarding to the upstream server. */
  url: string;
  /** From now on what clients send is held back (a partition towards the server); what the server sends still flows. */
  hold(): void;
  /** Sends what was held for clients still connected; what a client sent before it died is lost. */
  release(): void;
  close(): Promise<void>;
};

/**
 * A TCP proxy to a NATS server, to cut clients off from it: while held, their acks and requests
 * wait; a client killed meanwhile loses them, as when a network fails with a process.
 */
export async function startNatsProxy(upstream: string): Promise<NatsProxy> {
  const target = new URL(upstream);
  let holding = false;
  const links = new Set<{ client: net.Socket; server: net.Socket; held: Buffer[] }>();
  const proxy = net.createServer((client) => {
    const server = net.connect({ host: target.hostname, port: Number(target.port || 4222) });
    const link = { client, server, held: [] as Buffer[] };
    links.add(link);
    client.on('data', (chunk: Buffer) => (holding ? link.held.push(chunk) : server.write(chunk)));
    server.on('data', (chunk: Buffer) => client.write(chunk));
    const end = () => {
      links.delete(link);
      link.held = [];
      client.destroy();
      server.destroy();
    };
    client.on('close', end);
    server.on('close', end);
    client.on('error', end);
    server.on('error', end);
  });
  proxy.listen(0, '127.0.0.1');
  await once(proxy, 'listening');
  const address = proxy.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  return {
    url: `nats://127.0.0.1:${address.port}`,
    hold() {
      holding = true;
    },
    release() {
      holding = false;
      for (const link of links) for (const chunk of link.held.splice(0)) link.server.write(chunk);
    },
    async close() {
      for (const link of links) {
        link.client.destroy();
        link.server.destroy();
      }
      proxy.close();
    },
  };
}
