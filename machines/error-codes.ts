// Every code a client can see, once: in an HTTP error answer, a refused report, a task's or a
// step's outcome (what a playbook's `when:` tests), an execution's error, a batch's status. After
// fastify's lib/errors.js. Code names them through the types below (a misspelt code does not
// compile) or CODE; test/unit/error-codes-docs.test.ts holds docs/operations.md and
// docs/playbook-dsl.md to this list. Pure data in machines/ so that every side may import it:
// the machines, the worker, src/protocol.ts and the server's edge (src/errors.ts).

/**
 * Where a client meets a code:
 * - `http`: an error answer's status, and `detail.code` when the detail is an object;
 * - `report_refusal`: a reported event that was not recorded (`results[].error` of a report, the
 *   409/400 of `POST /api/events`, the `refused` list of a batch's `batch.completed` record);
 * - `task_outcome`: the `error.code` of a task's or a step's outcome, which `when:` (of an arc or
 *   of `retry`) can test, and the execution's error when no arc handles it;
 * - `execution`: an execution's `error.code` (a `playbook` task carries its child's error on as
 *   its outcome, so each of these is a `task_outcome` code too);
 * - `batch`: a batch's `error_code` (`GET /api/events/batch/{id}/status`).
 */
export type CodeWhere = 'http' | 'report_refusal' | 'task_outcome' | 'execution' | 'batch';

/** One entry; `status` and `message` (the text sent when the thrower gives none) for `http` codes only. */
export type CodeInfo = { readonly where: readonly CodeWhere[]; readonly meaning: string; readonly status?: number; readonly message?: string };

export const CODES = {
  // HTTP answers (src/api/error-handler.ts sends them; handlers throw `new ServiceError(code, …)`).
  bad_request: { where: ['http'], status: 400, message: 'the request cannot be carried out as sent', meaning: 'the request cannot be carried out as sent (a state or a value the handler refuses)' },
  validation_failed: { where: ['http'], status: 400, message: 'validation failed', meaning: 'a credential\'s data or a keychain token fails its schema; `detail.errors` names each field' },
  invalid_playbook: { where: ['http'], status: 400, message: 'Playbook validation failed', meaning: 'a playbook fails registration; every problem with its place in the document' },
  credential_test_unsupported: { where: ['http'], status: 400, message: 'this credential type has no connection test', meaning: '`POST /api/credentials/{name}/test` of a type without a probe' },
  credential_test_needs_url: { where: ['http'], status: 400, message: 'testing this credential type needs a url', meaning: '`POST /api/credentials/{name}/test` of an HTTP type without a `url`' },
  unknown_credential_type: { where: ['http'], status: 400, message: 'unknown credential type', meaning: 'a credential type outside src/credential/credential-types.ts' },
  unauthorized: { where: ['http'], status: 401, message: 'the request carries no valid credentials', meaning: 'no token, or one the server does not know' },
  signature_invalid: { where: ['http'], status: 401, message: 'the webhook delivery is not signed with the trigger\'s secret', meaning: 'a webhook delivery whose signature is missing or does not match its body, or whose signed timestamp is outside 5 minutes; nothing was started' },
  forbidden: { where: ['http'], status: 403, message: 'the caller may not do this', meaning: 'the caller\'s role does not allow the route' },
  secret_not_granted: { where: ['http'], status: 403, message: 'the worker token reads a secret only for a command it holds whose tasks name it', meaning: 'the worker token asked for a secret its claimed command does not name' },
  not_found: { where: ['http', 'task_outcome'], status: 404, message: 'not found', meaning: 'the thing named does not exist; as a task outcome: a `playbook` task\'s path is not in the catalog' },
  request_timeout: { where: ['http'], status: 408, message: 'the request did not arrive in time', meaning: 'a request whose headers or body did not arrive within the HTTP server\'s timeouts; answered before any route, then the connection is closed' },
  conflict: { where: ['http'], status: 409, message: 'the request conflicts with the current state', meaning: 'the request conflicts with the current state' },
  active_claim: { where: ['http'], status: 409, message: 'the command is claimed by another worker', meaning: 'a claim by id of a command another worker holds' },
  already_terminal: { where: ['http'], status: 409, message: 'the command has already finished', meaning: 'a claim by id of a command that has finished' },
  command_paused: { where: ['http'], status: 409, message: 'the command\'s execution is paused; it is claimable again once resumed', meaning: 'a claim by id of a command its execution\'s pause withdrew before a worker claimed it (status `PAUSED`); the resume gives it back to the claims' },
  pool_stopped: { where: ['http'], status: 409, message: 'the worker pool is deregistered; register it again to resume', meaning: 'a heartbeat of a deregistered worker pool' },
  sweep_in_progress: { where: ['http'], status: 409, message: 'another reaper sweep holds the lease; try again in a moment', meaning: '`POST /api/admin/command_reaper/sweep` while another sweep holds the reaper lease' },
  not_waiting: { where: ['http', 'report_refusal'], status: 409, message: 'no step of the execution waits for this signal', meaning: 'a signal for an execution none of whose steps waits for it now (and none still ahead keeps it with `buffer: true`), or that has ended; a pause of an execution not running, a resume of one not paused' },
  signal_buffer_full: { where: ['http', 'report_refusal'], status: 409, message: 'the execution keeps as many unconsumed signals as it may', meaning: 'a signal to be kept for a step that waits later (`buffer: true`) when the execution already keeps as many signals no step has taken as it may (`detail.limit`), or their payloads and this one\'s would come to more bytes than they may (`detail.limit_bytes`); nothing was stored: send it again once a step has taken one (a payload over `detail.limit_bytes` alone, once a step waits for it)' },
  limit_wait: { where: ['http'], status: 409, message: 'the command waits for room on its limit; workers take it by POST /api/worker/claim', meaning: 'a claim by id of a command whose task names a limit (src/flow/): only the claim picks, which count a key\'s room, take it' },
  inline_limit: { where: ['http'], status: 409, message: 'a playbook\'s inline limit (@<path>) is held by its playbook: change its concurrency there', meaning: '`PUT` or `DELETE /api/limits/@<path>`: a playbook\'s `concurrency: {limit: N}` is kept under that name and set only by the playbook' },
  limit_in_use: { where: ['http'], status: 409, message: 'the limit holds or queues work; delete it once its keys are idle', meaning: '`DELETE /api/limits/{name}` of a limit a key of which has running, queued or waiting work' },
  trigger_paused: { where: ['http'], status: 409, message: 'the trigger is paused', meaning: 'a webhook delivery to a paused trigger; nothing was started (resume the trigger to accept deliveries)' },
  payload_too_large: { where: ['http'], status: 413, message: 'request body is too large', meaning: 'a body over the limit (8 MiB, or `SVC_BATCH_MAX_BYTES` if larger)' },
  unsupported_media_type: { where: ['http'], status: 415, message: 'the body must be JSON, sent with content-type: application/json', meaning: 'a body whose `Content-Type` is not `application/json` (`text/plain`, a form, none that parses): every body of the API is JSON; `detail.message` names the type sent' },
  uri_too_long: { where: ['http'], status: 414, message: 'a path parameter is longer than the router takes', meaning: 'a path parameter longer than the router takes (1000 characters once decoded, above every route\'s own limit); answered before any route, `detail.limit` gives the limit' },
  unprocessable: { where: ['http'], status: 422, message: 'the request is not valid', meaning: 'the request\'s shape or values are not valid; `detail.errors` names each' },
  invalid_inputs: { where: ['http', 'task_outcome'], status: 422, message: 'the workload does not match the playbook inputs', meaning: 'a start\'s workload fails the playbook\'s `inputs:`; as a task outcome: a child\'s args fail its `inputs:`' },
  idempotency_key_reused: { where: ['http'], status: 422, message: 'the Idempotency-Key was first used with a different request body', meaning: 'an `Idempotency-Key` sent again to the same target with another body (a start, a batch, a signal)' },
  fire_refused: { where: ['http'], status: 422, message: 'the trigger\'s fire started nothing', meaning: 'a webhook delivery whose payload did not render or whose workload the playbook\'s `inputs:` refused; the fire is recorded, a repeat answers the same' },
  too_many_requests: { where: ['http'], status: 429, message: 'too many requests; try again after the time in Retry-After', meaning: 'the gateway\'s rate limit is reached, or (`SVC_AUTH=token`) the caller\'s address sent `SVC_AUTH_FAILURES_PER_MINUTE` refused credentials; retry after `Retry-After`' },
  headers_too_large: { where: ['http'], status: 431, message: 'the request headers are over 16 KiB together', meaning: 'a request whose headers together are over 16 KiB: Node\'s HTTP parser refuses it before any route, then the connection is closed' },
  internal: { where: ['http', 'task_outcome'], status: 500, message: 'internal error; the server log has the details', meaning: 'a bug: the server\'s log (HTTP) or the worker\'s message (a tool threw) has the details' },
  bad_gateway: { where: ['http'], status: 502, message: 'the server behind the gateway did not answer', meaning: 'the gateway\'s server did not answer, or refused the identity the gateway asserted (their `SVC_GATEWAY_SECRET`s differ, or their clocks more than 60 s); `detail` says which' },
  provider_unavailable: { where: ['http'], status: 503, message: 'the identity provider is not reachable yet; try again shortly', meaning: 'the gateway cannot reach the identity provider yet' },
  database_unavailable: { where: ['http'], status: 503, message: 'the database is unavailable; try again shortly', meaning: 'the database does not answer; retry after `Retry-After`' },
  write_contended: { where: ['http'], status: 503, message: 'the execution was moved on by other writers on every attempt; try again shortly', meaning: 'a start, report or cancel found its executions moved on by other writers on every one of its attempts; nothing was written; retry after `Retry-After`' },
  // Batch intake's refusals (the spec's failure codes): nothing was stored; retry after `Retry-After`.
  ack_timeout: { where: ['http'], status: 503, message: 'the batch was not enqueued in time', meaning: 'a batch could not be stored and enqueued within `SVC_BATCH_ACCEPT_ENQUEUE_TIMEOUT_SECONDS`' },
  enqueue_error: { where: ['http'], status: 503, message: 'the batch could not be enqueued', meaning: 'a batch could not be stored (the database is away, or the same key is being stored)' },
  queue_unavailable: { where: ['http'], status: 503, message: 'the batch queue is unavailable', meaning: '`SVC_BATCH_ACCEPT_QUEUE_MAXSIZE` batches wait already' },

  // A reported event the server did not record (machines/report-verdict.ts decides).
  stale_claim: { where: ['report_refusal', 'http'], status: 409, message: 'the report is from a claim that was taken over', meaning: 'the report comes from an earlier attempt of a command claimed again since (recorded as `command.refused`)' },
  not_holder: { where: ['report_refusal', 'http'], status: 409, message: 'the command is held by another worker', meaning: 'the report names another worker than the holder, or no claim at all' },
  not_claimed: { where: ['report_refusal', 'http'], status: 409, message: 'the command is not claimed; claim it before reporting', meaning: 'a report about a command nobody has claimed' },
  unknown_command: { where: ['report_refusal', 'http'], status: 400, message: 'the command does not belong to the execution', meaning: 'the report\'s `command_id` is not a command of its `execution_id`, or a worker\'s report names none' },
  already_reported: { where: ['report_refusal'], meaning: 'a worker report sent again (its `report_id`) after its answer was lost, whose first sending moved the command already: its events are stored once, nothing was stored again' },

  // A task's outcome, as the worker reports it (src/worker) or the engine makes it (machines/execution).
  template_error: { where: ['task_outcome'], meaning: 'a template failed to render (a task field, `retry.when`, `loop.in`, an arc\'s `when` or `set`)' },
  invalid_task: { where: ['task_outcome'], meaning: 'a rendered task field is not what its kind needs (named in the message), or a kind no worker runs' },
  error: { where: ['task_outcome'], meaning: 'a `playbook` task\'s `path` or `args` rendered to something unusable (no path)' },
  loop_input: { where: ['task_outcome'], meaning: 'a step\'s `loop.in` did not render to a list' },
  credential_not_found: { where: ['task_outcome'], meaning: 'the task\'s `auth` names no stored credential' },
  credential_not_granted: { where: ['task_outcome'], meaning: 'the credential is not given to this command (its tasks must name it)' },
  credential_unavailable: { where: ['task_outcome'], meaning: 'the worker could not fetch the credential from the server' },
  invalid_credential: { where: ['task_outcome'], meaning: 'the credential lacks the fields the task needs, or its type cannot serve the task' },
  auth: { where: ['task_outcome'], meaning: 'a token could not be obtained (oauth2 token endpoint, MCP metadata, the workload access token)' },
  no_connection: { where: ['task_outcome'], meaning: 'a `postgres` task without `auth` on a worker that may not reach the service database' },
  mcp_server_not_found: { where: ['task_outcome'], meaning: 'an `mcp` task\'s `server` is not registered' },
  mcp_server_unavailable: { where: ['task_outcome'], meaning: 'an `mcp` task\'s `server` could not be resolved' },
  connection: { where: ['task_outcome'], meaning: 'the target could not be reached (refused, DNS, TLS, reset)' },
  http_status: { where: ['task_outcome'], meaning: 'an `http` task got a status ≥ 400 it does not accept (`data` holds the answer)' },
  response_too_large: { where: ['task_outcome'], meaning: 'an `http` or `mcp` task\'s answer had a body over 8 MiB, or a `postgres` task\'s rows came to more, the most a report carries: the body was not read further, the statement was cancelled (a write whose rows came once it had run stands); or the task\'s outcome did not fit in its command\'s report (8 MiB as JSON with the rest of it): not stored, `data` null' },
  sql_error: { where: ['task_outcome'], meaning: 'a `postgres` task\'s statement failed (`data.sqlstate`)' },
  mcp_error: { where: ['task_outcome'], meaning: "the MCP server answered a protocol error, an HTTP error status (a session it no longer knows: 404) or something that is not an MCP answer (not JSON, not the protocol's shape); the server's text in the message is cut at 500 characters" },
  tool_error: { where: ['task_outcome'], meaning: 'the MCP tool returned an error result (`data` holds it)' },
  exit_code: { where: ['task_outcome'], meaning: 'a `shell` command exited non-zero or was killed by a signal' },
  resource_limit: { where: ['task_outcome'], meaning: 'a `shell` command reached its CPU time or file size limit' },
  spawn: { where: ['task_outcome'], meaning: 'the shell could not be started (a missing `cwd`, say)' },
  sandbox_unavailable: { where: ['task_outcome'], meaning: 'the worker runs no `shell` tasks: its sandbox cannot run' },
  timeout: { where: ['task_outcome'], meaning: 'the task\'s `timeout_seconds` ran out' },
  wait_timeout: { where: ['task_outcome'], meaning: 'a step waited for a signal that did not come within its `wait.timeout` (its outcome\'s status is `timeout`)' },
  limit_key: { where: ['task_outcome', 'execution', 'http'], status: 422, message: 'a limit key rendered to more than 500 characters or to text that cannot be stored; nothing was started', meaning: 'a task\'s `limit.key` (or a playbook\'s `concurrency.key`, `debounce.key`) rendered to a key over 500 characters, or holding NUL or a lone surrogate; over HTTP: a start refused for its playbook\'s key, nothing started (`detail.errors` names the field)' },
  wait_until: { where: ['task_outcome'], meaning: 'a step\'s `wait.until` did not render to a time (ISO 8601 with an offset, or epoch milliseconds, in the years 0001 to 9999)' },
  cancelled: { where: ['task_outcome', 'execution'], meaning: 'the command or the execution was cancelled' },
  aborted: { where: ['task_outcome'], meaning: 'the worker stopped before the task finished' },
  worker_error: { where: ['task_outcome'], meaning: 'the worker failed to run the command (a bug in its runner)' },
  report_rejected: { where: ['task_outcome'], meaning: 'the server refused the command\'s report (its input checks did); the message has its reason' },
  child_failed: { where: ['task_outcome'], meaning: 'a `playbook` task\'s child failed without an error of its own (as a rule the task carries the child\'s error)' },
  child_too_deep: { where: ['task_outcome'], meaning: 'a `playbook` task would start a child more than 32 levels of children under its root (a playbook that starts itself without end, say); nothing was started' },
  child_cancelled: { where: ['task_outcome'], meaning: 'a `playbook` task\'s child was cancelled without an error of its own (as a rule the task carries the child\'s `cancelled`)' },
  simulated: { where: ['task_outcome'], meaning: 'a failure chosen in a simulation (`svc simulate --outcome STEP=error`); never in a real run' },

  // An execution's error; a parent's `playbook` task carries it on as its outcome.
  step_cycle: { where: ['task_outcome', 'execution'], meaning: 'too many steps entered without running a task: a cycle of steps without tools; as a task outcome: a `playbook` task\'s child ended so' },

  // A batch's status (machines/batch-request.machine.ts): it routed none of its events; sending it again is safe.
  processing_timeout: { where: ['batch'], meaning: 'routing a batch did not finish within `SVC_BATCH_PROCESSING_TIMEOUT_SECONDS`' },
  processing_error: { where: ['batch'], meaning: 'routing a batch failed (the server log has why)' },
} as const satisfies Record<string, CodeInfo>;

export type Code = keyof typeof CODES;

/** The codes that appear `where`: `CodeIn<'task_outcome'>` is every code a `when:` can test. */
export type CodeIn<W extends CodeWhere> = { [K in Code]: W extends (typeof CODES)[K]['where'][number] ? K : never }[Code];

export type HttpCode = CodeIn<'http'>;
export type ReportRefusalCode = CodeIn<'report_refusal'>;
export type TaskOutcomeCode = CodeIn<'task_outcome'>;
export type BatchFailureCode = CodeIn<'batch'>;

/** Each code by its own name, for fields typed as any text (a stored error's `code`): `CODE.step_cycle`. */
export const CODE = Object.fromEntries(Object.keys(CODES).map((c) => [c, c])) as { readonly [K in Code]: K };

/** Every code, in the registry's order. */
export const ALL_CODES: readonly Code[] = Object.values(CODE);

/** What the registry says of `code`. */
export function codeInfo(code: Code): CodeInfo {
  return CODES[code];
}
