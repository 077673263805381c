import http from 'node:http';

// The bench's requests (its polls, the load client's starts): node:http with keep-alive costs a
// fraction of the CPU of fetch() (see docs/benchmarks.md), so the load generator weighs less.
export type Json = Record<string, unknown>;

const agent = new http.Agent({ keepAlive: true });

/** A JSON request against the service; throws on a non-2xx answer. */
export function api<T = Json>(baseUrl: string, method: string, path: string, body?: unknown): Promise<T> {
  const url = new URL(path, baseUrl);
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return new Promise<T>((ok, fail) => {
    const req = http.request(
      url,
      { method, agent, headers: payload === undefined ? {} : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) } },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => {
          const status = res.statusCode ?? 0;
          if (status < 200 || status >= 300) fail(new Error(`${method} ${path}: HTTP ${status} ${text.slice(0, 300)}`));
          else {
            try {
              ok((text ? JSON.parse(text) : {}) as T);
            } catch (err) {
              fail(err);
            }
          }
        });
        res.on('error', fail);
      },
    );
    req.on('error', fail);
    req.end(payload);
  });
}

/** Closes the keep-alive sockets of `api()`. */
export function closeApiAgent(): void {
  agent.destroy();
}
