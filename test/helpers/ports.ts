import { createServer } from 'node:net';

// Ports for what a test starts whose URL must be known before it listens (a server process, an
// embedded PostgreSQL, nats-server, a stack). They are taken below the kernel's ephemeral range
// (ip_local_port_range, 32768-60999 on Linux), in a slice of their own per test worker
// (VITEST_POOL_ID): a port from that range, found free by a listener on port 0 and closed again,
// could be handed meanwhile to another test's server listening on port 0 (whose health then
// answered for this one: it failed CI once) or be the local port of an outgoing connection.
const FIRST_PORT = 20_000;
const PORTS_PER_WORKER = 500;
/** Slices up to 32,000: below the ephemeral range. */
const WORKER_SLICES = 24;

let next = 0;

/** Nothing listens on `port` of 127.0.0.1 now. */
function bindable(port: number): Promise<boolean> {
  return new Promise((ok) => {
    const probe = createServer();
    probe.once('error', () => ok(false));
    probe.listen(port, '127.0.0.1', () => probe.close(() => ok(true)));
  });
}

/** A port of this test worker's slice that nothing listens on now; never the same twice in a row of 500. */
export async function freePort(): Promise<number> {
  const worker = Number(process.env.VITEST_POOL_ID ?? 0) % WORKER_SLICES;
  for (let tries = 0; tries < PORTS_PER_WORKER; tries++) {
    const port = FIRST_PORT + worker * PORTS_PER_WORKER + (next++ % PORTS_PER_WORKER);
    if (await bindable(port)) return port;
  }
  throw new Error(`no free port in ${FIRST_PORT + worker * PORTS_PER_WORKER}..+${PORTS_PER_WORKER}`);
}
