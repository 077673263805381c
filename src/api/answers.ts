// What every route's `schema.response` is made of: `responses()`, the one error answer, and the
// pieces answer schemas are built from. The OpenAPI document (/docs, generated clients) shows
// them. They document; they do not shape: answers are serialized as they are (answerSerializer in
// validation.ts), so a field left out of a schema is missing from the document, never from an
// answer. Each answer's schema is declared beside what makes it (a presenter, a route).
import { STATUS_CODES } from 'node:http';
import * as v from 'valibot';
import { ALL_CODES, codeInfo, type CodeIn } from '../../machines/error-codes.ts';
import { jsonSchema } from './validation.ts';
import { RETRY_AFTER_SECONDS } from '../errors.ts';
import { ownKeysRecord } from '../own-keys-record.ts';

export const integer = v.pipe(v.number(), v.integer());
/** A time as answers write it (`Date.toISOString()`, or the database's text of the same form). */
export const time = v.pipe(v.string(), v.isoTimestamp());
/** A JSON object of any fields (a payload, a spec, labels). */
export const anyObject = ownKeysRecord(v.string(), v.unknown());

const HTTP_CODES = ALL_CODES.filter((c): c is CodeIn<'http'> => codeInfo(c).where.includes('http'));

/** Every error answer (src/api/error-handler.ts): one schema for every route's 4xx and 5xx. */
export const errorAnswer = v.pipe(
  v.object({
    detail: v.union([
      v.string(),
      v.looseObject({
        code: v.optional(v.picklist(HTTP_CODES)),
        message: v.string(),
        errors: v.optional(v.array(v.string())),
      }),
    ]),
  }),
  v.description('An error. `detail` is a message, or `{code, message, errors?}`: `code` as listed in docs/operations.md "Error codes", `errors` naming each refused field.'),
);

/** An answer in another media type than JSON, for `responses`: a stream of server-sent events. */
export type MediaAnswer = { mediaType: string; schema: v.GenericSchema; description: string };

/**
 * A route's `schema.response`: each answer by its status, and `errorAnswer` for every 4xx and 5xx
 * (any route may refuse a caller, an input, or answer 503 while the database is away).
 */
export function responses(answers: Readonly<Record<number, v.GenericSchema | MediaAnswer>>): Record<string, Record<string, unknown>> {
  const out: Record<string, Record<string, unknown>> = {};
  for (const [status, a] of Object.entries(answers)) {
    if ('mediaType' in a) out[status] = { description: a.description, content: { [a.mediaType]: { schema: jsonSchema(a.schema) } } };
    else {
      const json = jsonSchema(a);
      // The document's description of the answer (the schema's own, else the status's name).
      json.description ??= STATUS_CODES[status];
      out[status] = json;
    }
  }
  // Every 503 carries Retry-After (src/api/error-handler.ts): a client written from the document waits that long.
  // Set on the schema itself: it stays the one valibotSchemaOf knows.
  const serverError = jsonSchema(errorAnswer);
  serverError.headers = answerHeaders({ 'retry-after': `on a 503: the seconds to wait before sending again (${RETRY_AFTER_SECONDS} when the database is away)` });
  return { ...out, '4xx': jsonSchema(errorAnswer), '5xx': serverError };
}

/** Headers of an answer as @fastify/swagger reads them from a response schema: each a string described by its text. */
function answerHeaders(headers: Readonly<Record<string, string>>): Record<string, { type: 'string'; description: string }> {
  return Object.fromEntries(Object.entries(headers).map(([name, description]) => [name, { type: 'string', description }]));
}

/**
 * The header a keyed route (Idempotency-Key) sets on an answer that repeats the first answer to
 * its key, for `withAnswerHeaders` (src/api/idempotent-starts.ts sends it).
 */
export const REPLAYED_HEADER_DOC = {
  'idempotent-replayed': '`true` when this answer repeats the first answer to its Idempotency-Key: nothing was started, signalled or accepted again (absent otherwise)',
} as const;

/**
 * `out` (what `responses()` made) with the headers its `status` answer carries documented, each
 * a string described by its text (a 201's or 202's Location).
 */
export function withAnswerHeaders(out: Record<string, Record<string, unknown>>, status: number, headers: Readonly<Record<string, string>>): Record<string, Record<string, unknown>> {
  out[String(status)].headers = answerHeaders(headers);
  return out;
}
