import type { FastifyInstance } from 'fastify';

/**
 * Ends the socket of a WebSocket upgrade request once the server answers it over HTTP (refused:
 * no token, no such route). @fastify/websocket routes an upgrade through fastify on the socket
 * node's server handed over for the upgrade and no longer tracks: nothing else ends it, and left
 * open (CLOSE-WAIT once its client hangs up) it holds the server's close, so SIGTERM, for ever.
 */
export function endAnsweredUpgrades(app: FastifyInstance): void {
  app.addHook('onResponse', async (req) => {
    if (req.headers.upgrade !== undefined) req.raw.socket.end(() => req.raw.socket.destroy());
  });
}
