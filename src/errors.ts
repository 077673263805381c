// One registry of error codes with their HTTP statuses (after fastify's lib/errors.js).
// Handlers throw `new ServiceError('not_found', 'execution 42 not found')`; one error handler
// turns it into `{"detail": ...}`.

export const ERROR_STATUS = {
  bad_request: 400,
  validation_failed: 400,
  invalid_playbook: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  active_claim: 409,
  already_terminal: 409,
  payload_too_large: 413,
  unprocessable: 422,
  ack_timeout: 503,
  enqueue_error: 503,
  queue_unavailable: 503,
  worker_unavailable: 503,
  processing_timeout: 503,
  processing_error: 503,
  database_unavailable: 503,
  internal: 500,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

/** An error meant for the client: `detail` is sent as is, so it must never hold a secret. */
export class ServiceError extends Error {
  override name = 'ServiceError';
  readonly code: ErrorCode;
  readonly statusCode: number;
  readonly detail: string | Record<string, unknown>;

  constructor(code: ErrorCode, detail: string | Record<string, unknown>) {
    super(typeof detail === 'string' ? detail : String(detail.message ?? code));
    this.code = code;
    this.statusCode = ERROR_STATUS[code];
    this.detail = detail;
  }
}

/** Shorthand for a 404 naming what was not found. */
export const notFound = (what: string): ServiceError => new ServiceError('not_found', `${what} not found`);
