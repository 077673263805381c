// One registry of error codes, after fastify's lib/errors.js: each code once, with the HTTP status
// the edge (src/api/error-handler.ts) answers it with and the message sent when the thrower gives
// none. Handlers and lower layers throw `new ServiceError('not_found', 'execution 42 not found')`.

export const ERRORS = {
  bad_request: { status: 400, message: 'the request cannot be carried out as sent' },
  validation_failed: { status: 400, message: 'validation failed' },
  invalid_playbook: { status: 400, message: 'Playbook validation failed' },
  // POST /api/credentials/{name}/test (src/api/credential-test.ts): a type without a probe; an HTTP type without a url.
  credential_test_unsupported: { status: 400, message: 'this credential type has no connection test' },
  credential_test_needs_url: { status: 400, message: 'testing this credential type needs a url' },
  // A credential type outside src/credential/credential-types.ts.
  unknown_credential_type: { status: 400, message: 'unknown credential type' },
  unauthorized: { status: 401, message: 'the request carries no valid credentials' },
  forbidden: { status: 403, message: 'the caller may not do this' },
  // The worker token reads a secret only for a claimed command whose tasks name it (src/api/worker-grant.ts).
  secret_not_granted: { status: 403, message: 'the worker token reads a secret only for a command it holds whose tasks name it' },
  not_found: { status: 404, message: 'not found' },
  conflict: { status: 409, message: 'the request conflicts with the current state' },
  active_claim: { status: 409, message: 'the command is claimed by another worker' },
  already_terminal: { status: 409, message: 'the command has already finished' },
  payload_too_large: { status: 413, message: 'request body is too large' },
  unprocessable: { status: 422, message: 'the request is not valid' },
  // A start whose merged workload fails the playbook's `inputs:` (src/dsl/check-inputs.ts); nothing is started.
  invalid_inputs: { status: 422, message: 'the workload does not match the playbook inputs' },
  too_many_requests: { status: 429, message: 'too many requests; try again after the time in Retry-After' },
  // The gateway's: the server behind it did not answer.
  bad_gateway: { status: 502, message: 'the server behind the gateway did not answer' },
  provider_unavailable: { status: 503, message: 'the identity provider is not reachable yet; try again shortly' },
  // Batch intake failure codes of the spec that refuse a batch; processing_timeout and
  // processing_error end one (machines/batch-request.machine.ts). worker_unavailable is never
  // answered: every server runs its processors while it listens (docs/operations.md).
  ack_timeout: { status: 503, message: 'the batch was not enqueued in time' },
  enqueue_error: { status: 503, message: 'the batch could not be enqueued' },
  queue_unavailable: { status: 503, message: 'the batch queue is unavailable' },
  database_unavailable: { status: 503, message: 'the database is unavailable; try again shortly' },
  internal: { status: 500, message: 'internal error; the server log has the details' },
} as const satisfies Record<string, { status: number; message: string }>;

export type ErrorCode = keyof typeof ERRORS;

/** What a 503 answer asks the client to wait before trying again (`Retry-After`): a database restart takes seconds. */
export const RETRY_AFTER_SECONDS = 2;

/**
 * An error meant for the client: `detail` is sent as is, so it must never hold a secret. Without
 * one, the detail is `{code, message}` with the registry's message. `cause` is for the log only.
 */
export class ServiceError extends Error {
  override name = 'ServiceError';
  readonly code: ErrorCode;
  readonly detail: string | Record<string, unknown>;

  constructor(code: ErrorCode, detail?: string | Record<string, unknown>, options?: { cause?: unknown }) {
    const body = detail ?? { code, message: ERRORS[code].message };
    super(typeof body === 'string' ? body : String(body.message ?? code), options);
    this.code = code;
    this.detail = body;
  }
}

/** Shorthand for a 404 naming what was not found. */
export const notFound = (what: string): ServiceError => new ServiceError('not_found', `${what} not found`);
