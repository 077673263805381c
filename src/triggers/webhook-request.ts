import { createHash } from 'node:crypto';
import { bodyText, invalidUtf8At } from '../body-text.ts';
import { parseJsonBody, urlProblem } from '../api/input-guard.ts';
import { IDENTITY_HEADER } from '../auth/identity-assertion.ts';
import { TemplateError, renderValue } from '../dsl/render.ts';
import { ServiceError } from '../errors.ts';
import { unstorableText } from '../find-unstorable.ts';
import type { WebhookHeaders } from './webhook-signature.ts';

// What a webhook trigger's templates see of a delivery (`request`), and the delivery's fire key.
// The body is data: parsed (JSON, a form) or kept as text, never rendered as a template.

/** The `request` root of a webhook trigger's templates. */
export type WebhookRequest = { body: unknown; headers: Record<string, string>; query: Record<string, string | string[]> };

/** The longest fire key a delivery may name (as POST /api/triggers/.../fire takes). */
export const MAX_DELIVERY_ID_CHARS = 255;

// Headers that carry a credential (the bearer style's secret, a session, the gateway's assertion):
// a payload template can never copy them into a workload.
const HIDDEN_HEADERS: ReadonlySet<string> = new Set(['authorization', 'proxy-authorization', 'cookie', IDENTITY_HEADER]);
const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json\b/i;
const FORM_TYPE = /^application\/x-www-form-urlencoded\b/i;

/**
 * The `request` root of a delivery: the body parsed by its content type (JSON; a form as an
 * object, a repeated name as a list; anything else as UTF-8 text; no body: null), the headers
 * (lower-cased, without credentials nor the trigger's `signatureHeaders`; the copies of a repeated
 * one joined with `, `) and the query string. Throws 400/422 for a JSON body that does not parse
 * or cannot be stored, 400 for a form body that is not UTF-8.
 */
export function webhookRequest(raw: Buffer, headers: WebhookHeaders, rawQuery: string, signatureHeaders: readonly string[] = []): WebhookRequest {
  const visible: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined || HIDDEN_HEADERS.has(name) || signatureHeaders.includes(name)) continue;
    visible[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  const declared = headers['content-type'];
  const type = (Array.isArray(declared) ? declared[0] : declared) ?? '';
  return { body: bodyOf(raw, type), headers: visible, query: pairs(new URLSearchParams(rawQuery)) };
}

function bodyOf(raw: Buffer, contentType: string): unknown {
  if (raw.length === 0) return null;
  if (JSON_TYPE.test(contentType)) return parseJsonBody(bodyText(raw));
  if (FORM_TYPE.test(contentType)) return formBody(raw);
  return raw.toString('utf8');
}

/**
 * A form body, read as a query string is (urlProblem): its bytes and its percent-encoding are
 * UTF-8, or 400 naming the field. Decoded leniently, each bad sequence became U+FFFD: a workload
 * holding text the sender never sent, where the same field in the query string was refused.
 */
function formBody(raw: Buffer): Record<string, string | string[]> {
  const at = invalidUtf8At(raw);
  if (at !== undefined) throw new ServiceError('bad_request', { message: `the body is not valid UTF-8 (at byte ${at}): a form is UTF-8 text, other bytes percent-encoded` });
  const text = raw.toString('utf8');
  const bad = urlProblem(undefined, undefined, text);
  if (bad) throw new ServiceError('bad_request', { message: 'invalid body', errors: [`${bad.problem.path}: ${bad.problem.message}`] });
  return pairs(new URLSearchParams(text));
}

/** Name → value, or the list of values of a name given more than once (a mapping without a prototype). */
function pairs(params: URLSearchParams): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = Object.create(null);
  for (const [name, value] of params) {
    const had = out[name];
    out[name] = had === undefined ? value : Array.isArray(had) ? [...had, value] : [had, value];
  }
  return out;
}

/**
 * A delivery's fire key: the trigger's `delivery_id` template rendered over `{request}` (a
 * repeat of that id answers with the first execution), else the SHA-256 hex of the raw body.
 * Throws 400 when the template does not render to a non-empty text of at most 255 characters.
 */
export function webhookFireKey(deliveryId: string | undefined, request: WebhookRequest, raw: Buffer): string {
  if (deliveryId === undefined) return createHash('sha256').update(raw).digest('hex');
  let value: unknown;
  try {
    value = renderValue(deliveryId, { request }, 'delivery_id');
  } catch (err) {
    if (err instanceof TemplateError) throw new ServiceError('bad_request', `the trigger's delivery_id did not render: ${err.detail}`);
    throw err;
  }
  const key = typeof value === 'string' ? value.trim() : typeof value === 'number' && Number.isFinite(value) ? String(value) : '';
  if (key === '') throw new ServiceError('bad_request', 'the trigger\'s delivery_id rendered empty: the delivery names no id');
  if (key.length > MAX_DELIVERY_ID_CHARS) throw new ServiceError('bad_request', `the delivery id is longer than ${MAX_DELIVERY_ID_CHARS} characters`);
  const unstorable = unstorableText(key);
  if (unstorable) throw new ServiceError('bad_request', `the delivery id ${unstorable}`);
  return key;
}
