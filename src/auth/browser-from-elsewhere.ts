import { isLoopbackHost } from '../config.ts';

// What listens on loopback and checks no caller (SVC_AUTH=none, `svc doctor serve`) trusts that
// only this machine reaches it; a browser on this machine breaks that: any site it visits can
// send it requests (a form or fetch POST, a WebSocket: its Origin says so), and one whose name
// it rebinds to 127.0.0.1 reads the answers too (its Host then is that name). Programs send no
// Origin, and a page of the service itself is same-origin.

/** The name of a Host header or an Origin (`[::1]:8082`, `http://localhost:8082`), without its port; undefined when unreadable. */
function hostNameOf(value: string, isOrigin: boolean): string | undefined {
  if (!isOrigin) return value.startsWith('[') ? value.slice(0, value.indexOf(']') + 1) : value.replace(/:\d*$/, '');
  try {
    return new URL(value).hostname;
  } catch {
    return undefined; // `null` (a sandboxed or file page) and other text: no origin here
  }
}

/**
 * Why a request to a loopback listener that checks no caller comes from a browser's page of
 * another site (its Host not a loopback name, or its Origin not on one), or undefined. `who`
 * names the listener in the reason (`SVC_AUTH=none`, `svc doctor serve`).
 */
export function browserFromElsewhere(headers: { host?: string; origin?: string }, who: string): string | undefined {
  const { host, origin } = headers;
  if (host !== undefined) {
    const name = hostNameOf(host, false);
    if (name === undefined || !isLoopbackHost(name)) return `${who} answers only requests addressed to a loopback name, not ${host} (a site rebinding its name here)`;
  }
  if (origin !== undefined) {
    const name = hostNameOf(origin, true);
    if (name === undefined || !isLoopbackHost(name)) return `${who} takes no request a page of another origin (${origin}) sends from a browser`;
  }
  return undefined;
}
