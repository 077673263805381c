import http from 'node:http';

// The bench's requests (its polls, the load clients' requests): node:http with keep-alive costs a
// fraction of the CPU of fetch() (see docs/benchmarks.md), so the load generator weighs less.
export type Json = Record<string, unknown>;

const agent = new http.Agent({ keepAlive: true });

/** A JSON request against the service: its status and parsed body (text when not JSON), whatever the status. */
export function request(baseUrl: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<{ status: number; body: unknown }> {
  const url = new URL(path, baseUrl);
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((ok, fail) => {
    const req = http.request(
      url,
      { method, agent, headers: payload === undefined ? headers : { ...headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) } },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => {
          let parsed: unknown = text;
          try {
            parsed = text ? JSON.parse(text) : {};
          } catch {
            // not JSON: keep the text
          }
          ok({ status: res.statusCode ?? 0, body: parsed });
        });
        res.on('error', fail);
      },
    );
    req.on('error', fail);
    req.end(payload);
  });
}

/** A JSON request against the service; throws on a non-2xx answer. */
export async function api<T = Json>(baseUrl: string, method: string, path: string, body?: unknown): Promise<T> {
  const r = await request(baseUrl, method, path, body);
  if (r.status < 200 || r.status >= 300) throw new Error(`${method} ${path}: HTTP ${r.status} ${JSON.stringify(r.body).slice(0, 300)}`);
  if (typeof r.body === 'string') throw new Error(`${method} ${path}: not JSON: ${r.body.slice(0, 300)}`);
  return r.body as T;
}

/** Closes the keep-alive sockets of `api()` and `request()`. */
export function closeApiAgent(): void {
  agent.destroy();
}
