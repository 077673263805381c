// Outbound HTTP of keychain resolution: token requests (create and renew) and secret-manager calls.
// Nothing here logs, and no reason string quotes a request or response body: a token endpoint may
// echo the client secret it was sent, and its answer is the secret itself.
import { STATUS_CODES } from 'node:http';
import { answerText } from './tools/answer-limit.ts';
import { describeError } from './tools/outcome.ts';
import { fetchFollowing } from './tools/fetch-following.ts';
import { RENDERED_USERINFO_PROBLEM } from '../url-userinfo.ts';

/** One token request must not hang a command forever; it is shared by concurrent tasks, so it has its own bound. */
export const KEYCHAIN_REQUEST_TIMEOUT_MS = 30_000;

export type OutboundRequest = {
  url: string;
  method: string;
  headers: Record<string, string>;
  /** Encoded as a form when the content-type header says so, as JSON otherwise; query parameters for GET/HEAD. */
  data?: Record<string, unknown>;
};

export type OutboundAnswer = { ok: true; status: number; body: unknown } | { ok: false; reason: string };

const FORM_TYPE = 'application/x-www-form-urlencoded';
// The headers of a keychain request that hold no secret, kept on a redirect to another origin.
const SENT_ON = new Set(['accept', 'content-type']);

function headerValue(headers: Record<string, string>, name: string): string | undefined {
  const wanted = name.toLowerCase();
  for (const [key, value] of Object.entries(headers)) if (key.toLowerCase() === wanted) return value;
  return undefined;
}

/** A form or query value as text: scalars as they are, lists space-joined (OAuth2 scopes), objects as JSON. */
function formValue(value: unknown): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return String(value);
  if (Array.isArray(value)) return value.map((item) => formValue(item) ?? '').join(' ');
  return JSON.stringify(value);
}

function formOf(data: Record<string, unknown>): URLSearchParams {
  const form = new URLSearchParams();
  for (const [key, value] of Object.entries(data)) {
    const text = formValue(value);
    if (text !== undefined) form.set(key, text);
  }
  return form;
}

/** The origin and path of a URL: what a reason may name (the query may hold a key). */
export function shownUrl(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.origin}${parsed.pathname}`;
  } catch {
    return '(invalid URL)';
  }
}

function parseBody(text: string, contentType: string): unknown {
  if (text.trim() === '') return null;
  try {
    return JSON.parse(text);
  } catch {
    // A few token endpoints (GitHub's) answer a form-encoded body.
    if (contentType.includes(FORM_TYPE)) return Object.fromEntries(new URLSearchParams(text));
    return undefined;
  }
}

/** Sends the request and reads the answer (JSON parsed); `ok: false` only when no answer came. */
export async function sendOutbound(request: OutboundRequest, fetchImpl: typeof fetch = fetch): Promise<OutboundAnswer> {
  const method = request.method.toUpperCase();
  let url: URL;
  try {
    url = new URL(request.url);
  } catch {
    return { ok: false, reason: 'the endpoint is not a valid URL' };
  }
  // fetch refuses it quoting the URL, password and all, into the reason (and the worker's log).
  if (url.username !== '' || url.password !== '') return { ok: false, reason: `the endpoint ${RENDERED_USERINFO_PROBLEM}` };
  const headers: Record<string, string> = { ...request.headers };
  if (headerValue(headers, 'accept') === undefined) headers.accept = 'application/json';
  let body: string | undefined;
  if (request.data !== undefined) {
    if (method === 'GET' || method === 'HEAD') {
      for (const [key, value] of formOf(request.data)) url.searchParams.set(key, value);
    } else if ((headerValue(headers, 'content-type') ?? '').toLowerCase().includes(FORM_TYPE)) {
      body = formOf(request.data).toString();
    } else {
      body = JSON.stringify(request.data);
      if (headerValue(headers, 'content-type') === undefined) headers['content-type'] = 'application/json';
    }
  }
  let response: Response;
  let text: string;
  try {
    // Its headers (a credential's among them) and body (a client secret) go to the endpoint's
    // origin only: a hop to another drops the headers, and one that would carry the body is refused.
    const originOnly = Object.keys(headers).filter((name) => !SENT_ON.has(name.toLowerCase()));
    response = await fetchFollowing(url, { method, headers: new Headers(headers), body, signal: AbortSignal.timeout(KEYCHAIN_REQUEST_TIMEOUT_MS) }, originOnly, { bodyOriginOnly: true, fetch: fetchImpl });
    // Read only as far as a task's answer is: an endless answer would fill the worker's memory till the timeout.
    text = await answerText(response);
  } catch (error) {
    return { ok: false, reason: `${method} ${shownUrl(request.url)} failed: ${describeError(error)}` };
  }
  return { ok: true, status: response.status, body: parseBody(text, response.headers.get('content-type') ?? '') };
}

/** `HTTP 500 Internal Server Error`: the status line a reason may carry (never the body). */
export function statusText(status: number): string {
  return `HTTP ${status} ${STATUS_CODES[status] ?? ''}`.trim();
}
