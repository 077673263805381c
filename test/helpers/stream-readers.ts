// Readers of the server's long-lived answers for tests: the inspection WebSocket and a server-sent
// event stream, each telling how and when it ended.
import { setTimeout as sleep } from 'node:timers/promises';
import WebSocket from 'ws';

export type Closed = { code: number; reason: string; at: number };

/** Opens the WebSocket at `url` (http or ws) with `headers`; resolves once its first message came, with how it closes later. */
export async function openSocket(url: string, headers: Record<string, string>): Promise<{ closed: Promise<Closed>; ws: WebSocket }> {
  const ws = new WebSocket(url.replace(/^http/, 'ws'), { headers });
  const closed = new Promise<Closed>((ok) => ws.once('close', (code, reason) => ok({ code, reason: reason.toString(), at: Date.now() })));
  await new Promise<void>((ok, fail) => {
    ws.once('message', () => ok());
    ws.once('error', fail);
    ws.once('unexpected-response', (_r, res) => fail(new Error(`handshake refused: ${res.statusCode}`)));
  });
  return { closed, ws };
}

/** Reads the event stream of `res` as it grows: its text so far, and when it ended (ms since the epoch). */
export function readEventStream(res: Response): { text: () => string; ended: Promise<number> } {
  let text = '';
  const decoder = new TextDecoder();
  const ended = (async () => {
    for await (const chunk of res.body!) text += decoder.decode(chunk, { stream: true });
    return Date.now();
  })();
  return { text: () => text, ended };
}

/** True when `p` has not settled within `ms`. */
export const stillOpen = <T>(p: Promise<T>, ms: number): Promise<boolean> => Promise.race([p.then(() => false), sleep(ms).then(() => true)]);
