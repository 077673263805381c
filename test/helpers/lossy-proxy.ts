import { createServer, request, type IncomingMessage } from 'node:http';

/** What the proxy does to one request: pass it on, drop the answer after the server acted, or answer 503 itself. */
export type ProxyAct = 'lose' | 'refuse' | null;

export type LossyProxy = { url: string; close(): Promise<void> };

/**
 * An HTTP proxy in front of `upstream` that does to each request what `act` says: a client that
 * sends again after a lost answer or a 503 can be watched (the server acted on a lost one).
 */
export async function startLossyProxy(upstream: string, act: (req: IncomingMessage) => ProxyAct): Promise<LossyProxy> {
  const target = new URL(upstream);
  const proxy = createServer((req, res) => {
    const what = act(req);
    if (what === 'refuse') {
      res.writeHead(503, { 'content-type': 'application/json', 'retry-after': '1' }).end('{"detail":"database unavailable"}');
      return;
    }
    const out = request({ hostname: target.hostname, port: target.port, path: req.url, method: req.method, headers: req.headers }, (answer) => {
      if (what === 'lose') {
        // The server acted and answered; the client never hears of it.
        answer.resume();
        answer.on('end', () => req.socket.destroy());
        return;
      }
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    req.pipe(out);
  });
  await new Promise<void>((ok) => proxy.listen(0, '127.0.0.1', ok));
  const address = proxy.address();
  return {
    url: `http://127.0.0.1:${address && typeof address === 'object' ? address.port : 0}`,
    async close() {
      proxy.closeAllConnections();
      await new Promise((ok) => proxy.close(ok));
    },
  };
}
