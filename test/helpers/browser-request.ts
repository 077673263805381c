// A request with the headers a browser sends (Host and Origin included, which fetch will not
// let a program set), through node:http: what a page of another site, or one rebinding its name
// to 127.0.0.1, sends a loopback listener.
import { request } from 'node:http';

/** Sends `method path` to the listener at `url` with exactly `headers`; the status and body text. */
export function browserRequest(url: string, method: string, path: string, headers: Record<string, string>): Promise<{ status: number; text: string }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const req = request({ host: hostname, port, method, path, headers }, (res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString('utf8')));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
    });
    req.on('error', reject);
    req.end();
  });
}
