// A TCP proxy in front of the test PostgreSQL, for the "database hangs" tests: until told
// otherwise it passes bytes both ways; then it takes new connections and sends nothing on (a
// stopped PostgreSQL: the TCP handshake succeeds, the login never answers).
import { connect, createServer, type Socket } from 'node:net';

export type DatabaseProxy = {
  /** The database's URL through the proxy (TCP: the test URL's Unix socket would go round it). */
  url: string;
  /** From now on new connections are left unanswered and open ones pass no byte either way. */
  hang(): void;
  /** From now on new connections are left unanswered, and open ones are closed. */
  cut(): void;
  close(): Promise<void>;
};

/** Starts a proxy to the database of `databaseUrl` on a free loopback port. */
export async function startDatabaseProxy(databaseUrl: string): Promise<DatabaseProxy> {
  const upstream = new URL(databaseUrl);
  let silent = false;
  const sockets = new Set<Socket>();
  const pairs = new Set<[Socket, Socket]>();
  const proxy = createServer((client) => {
    sockets.add(client);
    client.on('close', () => sockets.delete(client));
    client.on('error', () => {});
    if (silent) return;
    const server = connect(Number(upstream.port), upstream.hostname);
    sockets.add(server);
    server.on('close', () => sockets.delete(server));
    server.on('error', () => client.destroy());
    client.on('close', () => server.destroy());
    server.on('close', () => client.destroy());
    client.pipe(server).pipe(client);
    pairs.add([client, server]);
  });
  await new Promise<void>((ok) => proxy.listen(0, '127.0.0.1', ok));
  const address = proxy.address();
  if (address === null || typeof address === 'string') throw new Error('no TCP address');
  const url = new URL(databaseUrl);
  url.host = `127.0.0.1:${address.port}`;
  url.searchParams.delete('host');
  return {
    url: url.toString(),
    hang() {
      silent = true;
      for (const [client, server] of pairs) {
        client.unpipe(server);
        server.unpipe(client);
        client.pause();
        server.pause();
      }
    },
    cut() {
      silent = true;
      for (const s of sockets) s.destroy();
    },
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise((ok) => proxy.close(ok));
    },
  };
}
