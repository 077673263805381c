// The HTTP side of the one registry of client-visible codes (machines/error-codes.ts): handlers
// and lower layers throw `new ServiceError('not_found', 'execution 42 not found')`, and the edge
// (src/api/error-handler.ts) answers with the status the registry gives the code.
import { CODES, type HttpCode } from '../machines/error-codes.ts';

export type ErrorCode = HttpCode;

/** The status `code` is answered with and the message sent when the thrower gives none. */
export function httpAnswerOf(code: ErrorCode): { status: number; message: string } {
  return CODES[code];
}

/** What a 503 answer asks the client to wait before trying again (`Retry-After`): a database restart takes seconds. */
export const RETRY_AFTER_SECONDS = 2;

/** An object detail: any fields, and a `code` only from the registry. */
export type ErrorDetail = { code?: ErrorCode } & Record<string, unknown>;

/**
 * The most problems an answer lists (`detail.errors`, and `detail.problems` beside them): a body
 * of 50,000 bad fields was answered with 50,000 errors, an answer as large as the request. The
 * first ones are listed, then `and N more`.
 */
export const MAX_LISTED_ERRORS = 100;

/** `detail` with its `errors` (and `problems`) cut to MAX_LISTED_ERRORS, the last line saying how many were left out. */
function capped(detail: ErrorDetail): ErrorDetail {
  const { errors, problems } = detail;
  if (!Array.isArray(errors) || errors.length <= MAX_LISTED_ERRORS) return detail;
  const listed = errors.slice(0, MAX_LISTED_ERRORS);
  const out: ErrorDetail = { ...detail, errors: [...listed, `and ${errors.length - MAX_LISTED_ERRORS} more`] };
  if (Array.isArray(problems)) out.problems = problems.slice(0, MAX_LISTED_ERRORS);
  return out;
}

/**
 * An error meant for the client: `detail` is sent as is, so it must never hold a secret. Without
 * one, the detail is `{code, message}` with the registry's message. `cause` is for the log only.
 */
export class ServiceError extends Error {
  override name = 'ServiceError';
  readonly code: ErrorCode;
  readonly detail: string | ErrorDetail;

  constructor(code: ErrorCode, detail?: string | ErrorDetail, options?: { cause?: unknown }) {
    // An object detail always names its code (DESIGN.md: `{code, message, ...}`); its own, when it has one, stays.
    const body = detail === undefined ? { code, message: httpAnswerOf(code).message } : typeof detail === 'string' ? detail : capped({ code, ...detail });
    super(typeof body === 'string' ? body : String(body.message ?? code), options);
    this.code = code;
    this.detail = body;
  }
}

/** Shorthand for a 404 naming what was not found. */
export const notFound = (what: string): ServiceError => new ServiceError('not_found', `${what} not found`);
