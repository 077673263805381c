import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { HmacSignature, WebhookTrigger } from './trigger.schema.ts';

// How a webhook delivery proves it comes from the holder of the trigger's secret (DESIGN.md
// "Triggers", docs/webhooks.md). Pure: the secret, the raw body bytes, the headers and the clock
// come in; a verdict goes out. Every comparison of secret-derived bytes is constant-time on
// buffers of equal length; no message quotes a secret, a signature or the body.

/** A signed timestamp further than this from the server's clock (either way) is refused. */
export const WEBHOOK_TIMESTAMP_TOLERANCE_SECONDS = 300;

/**
 * Request headers: names lower-cased; a header sent more than once is the array of its copies. The
 * route gives every copy (node's `headersDistinct`): node's own `headers` joins most repeats into
 * one text and keeps only the first of some (`authorization`), so a repeat would pass unseen.
 */
export type WebhookHeaders = Readonly<Record<string, string | string[] | undefined>>;

/** Why a delivery is refused: `signature` (missing, malformed or not matching) or `timestamp` (signed, but outside the window). */
export type SignatureVerdict = { ok: true } | { ok: false; reason: 'signature' | 'timestamp'; message: string };

const HEX_SHA256 = /^[0-9a-fA-F]{64}$/;
const UNIX_SECONDS = /^\d{1,12}$/;
const ok: SignatureVerdict = Object.freeze({ ok: true });
const refuse = (message: string): SignatureVerdict => ({ ok: false, reason: 'signature', message });

/**
 * Checks a delivery against the trigger's signature style with `secret`: github (X-Hub-Signature-256),
 * stripe (Stripe-Signature, any v1, t within 5 minutes), hmac (a header, a prefix, optionally a
 * timestamp header: `<ts>.<body>` is signed) or bearer (Authorization: Bearer <secret>).
 */
export function verifyWebhookSignature(style: WebhookTrigger['signature'], secret: string, body: Buffer, headers: WebhookHeaders, nowMs: number): SignatureVerdict {
  if (secret.length === 0) return refuse('the signature cannot be checked: the trigger has no secret');
  const spec: HmacSignature | 'github' | 'stripe' | 'bearer' = style === 'hmac' ? { style: 'hmac', header: 'x-signature', prefix: '' } : style;
  if (spec === 'github') return checkHex(secret, body, headers, { header: 'x-hub-signature-256', prefix: 'sha256=' });
  if (spec === 'stripe') return checkStripe(secret, body, headers, nowMs);
  if (spec === 'bearer') return checkBearer(secret, headers);
  return checkHmac(secret, body, headers, spec, nowMs);
}

/**
 * The headers that carry a delivery's signature in `style` (lower-cased). They are kept from the
 * delivery's `request.headers`: with the body they are a delivery anyone could send again under a
 * new (unsigned) delivery id, so they must not reach a workload or an event. GitHub sends the
 * SHA-1 `x-hub-signature` beside the SHA-256 one.
 */
export function signatureHeaders(style: WebhookTrigger['signature']): readonly string[] {
  if (style === 'github') return ['x-hub-signature-256', 'x-hub-signature'];
  if (style === 'stripe') return ['stripe-signature'];
  if (style === 'bearer') return ['authorization'];
  if (style === 'hmac') return ['x-signature'];
  return [style.header.toLowerCase()];
}

/** One header's value; a header sent more than once is not taken (which one was signed?). */
function single(headers: WebhookHeaders, name: string): string | undefined {
  const value = headers[name.toLowerCase()];
  if (Array.isArray(value)) return value.length === 1 ? value[0] : undefined;
  return value;
}

const hmac = (secret: string, parts: readonly (string | Buffer)[]): Buffer => {
  const mac = createHmac('sha256', secret);
  for (const part of parts) mac.update(part);
  return mac.digest();
};

/** True when `hex` is a SHA-256 digest in hex equal to `expected`, compared in constant time. */
function digestMatches(hex: string, expected: Buffer): boolean {
  if (!HEX_SHA256.test(hex)) return false;
  const given = Buffer.from(hex, 'hex');
  return given.length === expected.length && timingSafeEqual(given, expected);
}

function checkHex(secret: string, body: Buffer, headers: WebhookHeaders, where: { header: string; prefix: string }, timestamp?: string): SignatureVerdict {
  const value = single(headers, where.header);
  if (value === undefined) return refuse(`the ${where.header} header is missing (or sent more than once)`);
  if (!value.startsWith(where.prefix)) return refuse(`the ${where.header} header does not start with '${where.prefix}'`);
  const expected = hmac(secret, timestamp === undefined ? [body] : [timestamp, '.', body]);
  return digestMatches(value.slice(where.prefix.length).trim(), expected) ? ok : refuse(`the ${where.header} signature does not match the body`);
}

function checkHmac(secret: string, body: Buffer, headers: WebhookHeaders, spec: HmacSignature, nowMs: number): SignatureVerdict {
  if (spec.timestamp_header === undefined) return checkHex(secret, body, headers, spec);
  const ts = single(headers, spec.timestamp_header);
  if (ts === undefined) return refuse(`the ${spec.timestamp_header} header is missing (or sent more than once)`);
  if (!UNIX_SECONDS.test(ts.trim())) return refuse(`the ${spec.timestamp_header} header is not a time in Unix seconds`);
  const signed = checkHex(secret, body, headers, spec, ts.trim());
  return signed.ok ? fresh(Number(ts.trim()), nowMs, spec.timestamp_header) : signed;
}

/** `Stripe-Signature: t=<unix>,v1=<hex>[,v1=<hex>...]`: any v1 over `<t>.<body>` matching, then t within the window. */
function checkStripe(secret: string, body: Buffer, headers: WebhookHeaders, nowMs: number): SignatureVerdict {
  const value = single(headers, 'stripe-signature');
  if (value === undefined) return refuse('the stripe-signature header is missing (or sent more than once)');
  let t: string | undefined;
  const v1: string[] = [];
  for (const item of value.split(',')) {
    const eq = item.indexOf('=');
    if (eq < 0) continue;
    const key = item.slice(0, eq).trim();
    const val = item.slice(eq + 1).trim();
    if (key === 't') {
      // Two copies joined into one line (by a proxy) hold two: which one was signed?
      if (t !== undefined) return refuse('the stripe-signature header has more than one timestamp (sent more than once?)');
      t = val;
    } else if (key === 'v1') v1.push(val);
  }
  if (t === undefined || !UNIX_SECONDS.test(t)) return refuse('the stripe-signature header has no timestamp (t=<unix seconds>)');
  if (v1.length === 0) return refuse('the stripe-signature header has no v1 signature');
  const expected = hmac(secret, [t, '.', body]);
  // Every candidate is compared (no early exit): the time taken does not tell which one matched.
  let matched = false;
  for (const candidate of v1) matched = digestMatches(candidate, expected) || matched;
  if (!matched) return refuse('no v1 signature of the stripe-signature header matches the body');
  return fresh(Number(t), nowMs, 'stripe-signature timestamp');
}

/** `Authorization: Bearer <secret>`, compared as SHA-256 digests (equal lengths whatever was sent). */
function checkBearer(secret: string, headers: WebhookHeaders): SignatureVerdict {
  const value = single(headers, 'authorization');
  const match = value === undefined ? null : /^bearer\s+(.+)$/i.exec(value.trim());
  if (!match) return refuse('the authorization header is missing or is not `Bearer <secret>`');
  const digest = (text: string) => createHash('sha256').update(text).digest();
  return timingSafeEqual(digest(match[1]), digest(secret)) ? ok : refuse('the bearer secret does not match');
}

function fresh(seconds: number, nowMs: number, what: string): SignatureVerdict {
  const skew = Math.abs(nowMs / 1000 - seconds);
  if (skew <= WEBHOOK_TIMESTAMP_TOLERANCE_SECONDS) return ok;
  return { ok: false, reason: 'timestamp', message: `the ${what} is ${Math.round(skew)} s from the server's clock; at most ${WEBHOOK_TIMESTAMP_TOLERANCE_SECONDS} s is accepted` };
}
