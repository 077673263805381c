import { createHash } from 'node:crypto';

// NATS consumer names may hold no whitespace, `.`, `*`, `>`, `/` or `\`; they name files on the
// server, so they are kept short.
const READABLE_MAX = 48;

/**
 * The durable consumer of a NATS trigger, the same on every server: `svc_` and the path and name
 * with anything but letters, digits, `_` and `-` replaced by `_` (cut to 48 characters), then 12 hex
 * digits of their SHA-256, so `a/b`+`c` and `a_b`+`c` never share one.
 */
export function natsDurableName(path: string, name: string): string {
  const readable = `${path}__${name}`.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, READABLE_MAX);
  const digest = createHash('sha256').update(`${path}\0${name}`).digest('hex').slice(0, 12);
  return `svc_${readable}_${digest}`;
}
