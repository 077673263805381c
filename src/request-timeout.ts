// How long a request may take to arrive, headers and body (SVC_REQUEST_TIMEOUT_SECONDS), for the
// server and the gateway. fastify's requestTimeout defaults to 0, no limit, and overrides node's
// own 300 s: a sender trickling a body (a byte now and then, or none after the headers) held its
// connection for ever, on the webhook route that anyone may call without a token. node answers a
// request past it 408 (answerClientError: request_timeout) and closes the connection. A response
// that takes long (a stream, a long poll) is not bounded by it: only the request's arrival is.

/** Node's check of its connections' timers runs at most this often (its default interval). */
const MAX_CHECK_INTERVAL_MS = 30_000;
/** Node's own time for the headers to arrive, kept when the whole request may take longer. */
const HEADERS_TIMEOUT_MS = 60_000;

/** The fastify options bounding a request's arrival: `requestTimeout`, and node's server options it needs to hold. */
export function requestTimeoutOptions(seconds: number): {
  requestTimeout: number;
  http: { headersTimeout: number; connectionsCheckingInterval: number };
} {
  const ms = seconds * 1000;
  return {
    requestTimeout: ms,
    // Node refuses headersTimeout over requestTimeout, and checks the timers only every interval:
    // a short timeout is checked often enough to end near its time, not up to 30 s past it.
    http: { headersTimeout: Math.min(HEADERS_TIMEOUT_MS, ms), connectionsCheckingInterval: Math.min(MAX_CHECK_INTERVAL_MS, Math.max(250, Math.floor(ms / 4))) },
  };
}
