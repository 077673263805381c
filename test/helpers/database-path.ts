// A TCP path to a test's PostgreSQL that the test can break: cut (its connections ended, new ones
// refused), opened again on the same port, or frozen (connections stay open and nothing crosses
// them, as a database that hangs, or a network that drops packets, looks from the client).
import { connect, createServer, type Server, type Socket } from 'node:net';

export class DatabasePath {
  #server: Server | undefined;
  readonly #sockets = new Set<Socket>();
  #frozen = false;
  readonly target: { host: string; port: number } | { path: string };
  port = 0;

  /** `target`: PostgreSQL's TCP address, or its Unix socket's path (the embedded one's). */
  constructor(target: { host: string; port: number } | { path: string }) {
    this.target = target;
  }

  /** The path to the database of `databaseUrl` (a TCP address or the embedded one's socket directory). */
  static to(databaseUrl: string): DatabasePath {
    const url = new URL(databaseUrl);
    const socketDir = url.searchParams.get('host');
    const port = Number(url.port || 5432);
    return new DatabasePath(socketDir ? { path: `${socketDir}/.s.PGSQL.${port}` } : { host: url.hostname, port });
  }

  /** `databaseUrl` reaching its database through this path (open it first). */
  urlThrough(databaseUrl: string): string {
    const url = new URL(databaseUrl);
    url.searchParams.delete('host');
    url.hostname = '127.0.0.1';
    url.port = String(this.port);
    return url.toString();
  }

  async open(): Promise<void> {
    this.#frozen = false;
    this.#server = createServer((client) => {
      const upstream = 'path' in this.target ? connect(this.target.path) : connect(this.target.port, this.target.host);
      for (const s of [client, upstream]) {
        this.#sockets.add(s);
        s.on('error', () => {});
        s.on('close', () => this.#sockets.delete(s));
      }
      client.pipe(upstream).pipe(client);
      // After pipe(), which would resume them.
      if (this.#frozen) for (const s of [client, upstream]) s.pause();
    });
    await new Promise<void>((ok) => this.#server!.listen(this.port, '127.0.0.1', ok));
    this.port = (this.#server.address() as { port: number }).port;
  }

  /** Nothing crosses the path any more, and connections made on it get no answer; none is closed. */
  freeze(): void {
    this.#frozen = true;
    for (const s of this.#sockets) s.pause();
  }

  async cut(): Promise<void> {
    for (const s of this.#sockets) s.destroy();
    await new Promise((ok) => this.#server?.close(ok));
  }
}
