import type { FastifyInstance } from 'fastify';
import { MAX_CONTROL_REASON_CHARS } from '../protocol.ts';
import * as v from 'valibot';
import { kindRefusal, StartBatcher, type Started } from '../../actors/start-execution.ts';
import type { AppDeps } from '../app-deps.ts';
import { getCatalogEntry } from '../db/catalog.repo.ts';
import { countExecutionsByStatus, EXECUTION_COUNT_CAP, listExecutions, type ExecutionListFilter } from '../db/execution.repo.ts';
import { EXECUTION_VIEW_WAITS_MAX, getExecutionWithRetryLinks } from '../db/execution-view.repo.ts';
import { cancelExecution } from '../engine/cancel-execution.ts';
import { cleanupStuckExecutions, type CleanupResult } from '../engine/cleanup-executions.ts';
import { retryExecution, type Retried } from '../engine/retry-execution.ts';
import { ServiceError, notFound } from '../errors.ts';
import { decodeExecutionCursor, encodeExecutionCursor } from './execution-cursor.ts';
import { StartTimeText } from '../start-time-text.ts';
import { startPath } from './catalog-path.ts';
import { emptyQueryValuesAbsent } from './empty-query-values.ts';
import { IDEMPOTENCY_KEY_HEADER, IdempotentStarts } from './idempotent-starts.ts';
import { integer, REPLAYED_HEADER_DOC, responses, time, withAnswerHeaders } from './answers.ts';
import { executionAnswer, presentExecution } from './present.ts';
import { exactObject, integerIn, integerText, jsonSchema, MAX_ID, MAX_INT4, oneOf } from './validation.ts';
import { EXECUTION_STATUSES } from '../../machines/statuses.ts';
import { ownKeysRecord } from '../own-keys-record.ts';
import { MAX_STEP_NAME_CHARS } from '../dsl/step-name-limit.ts';
import { LABEL_KEY, LABEL_KEY_RULE } from '../label-key.ts';

/**
 * A JSON object. `v.record` alone lets an array through (as `{"0": …}`), and a list is not
 * named inputs: the check runs first, on the value as sent. The JSON Schema stays `type: object`.
 */
export const jsonObject = v.pipe(
  v.custom<unknown>((input) => !Array.isArray(input), 'must be a JSON object, not an array'),
  ownKeysRecord(v.string(), v.unknown()),
);
/** The most labels an execution or a worker pool carries: a few searchable facts, not a store. */
export const MAX_LABELS = 20;
// Labels given at start: searchable (GET /api/executions?label=key:value), never secret, short.
const labels = v.optional(
  v.pipe(
    ownKeysRecord(v.pipe(v.string(), v.regex(LABEL_KEY, `must be a label key: ${LABEL_KEY_RULE}`)), v.pipe(v.string(), v.maxLength(200, 'must be at most 200 characters'))),
    v.check((l) => Object.keys(l).length <= MAX_LABELS, `must hold at most ${MAX_LABELS} labels`),
    v.description('labels of the execution, e.g. {"tenant": "acme"}: GET /api/executions?label=tenant:acme finds it'),
  ),
);
// A start's own priority, over its playbook's (taken first at the claim and the admission).
const priority = v.optional(v.pipe(integerIn(0, 9), v.description('0 (lowest) to 9 (highest); the playbook\'s `priority` (5 by default) when absent')));
// What each start field does, for the OpenAPI document (a client sending workload and payload both learns which wins).
const described = <S extends v.GenericSchema>(schema: S, text: string) => v.pipe(schema, v.description(text));
const pathField = described(startPath, 'the catalog path to start (its newest version unless `version` says otherwise)');
const runBody = v.object({
  path: pathField,
  payload: v.optional(described(jsonObject, "merged into the playbook's `workload` (one level: a field given here replaces the playbook's)"), {}),
  version: v.optional(described(integerIn(1, MAX_INT4), 'start this version of the path instead of the newest')),
  labels,
  priority,
});
const executeBody = v.object({
  path: described(startPath, 'the catalog path to start: the newest version registered under `resource_kind`'),
  resource_kind: v.optional(described(oneOf(['playbook', 'agent']), '`agent` for an agent playbook (required for one; 404 `Executable catalog entry not found` when the path holds no entry of that kind), else `playbook`')),
  workload: v.optional(described(jsonObject, "merged into the playbook's `workload` (one level); an agent's runtime inputs: server, endpoint, method, tool, arguments"), {}),
  payload: v.optional(described(jsonObject, "POST /api/run/playbook's name for the same: merged over `workload` (a field in both takes payload's)")),
  // POST /api/run/playbook's `version`, which this route does not take: left to the start routes'
  // taking of unknown fields, it was dropped and the newest version started in place of the one asked.
  version: v.optional(described(v.never('this route starts the newest version: POST /api/run/playbook starts the version asked'), 'not taken: POST /api/run/playbook starts a given version; 422 here')),
  labels,
  priority,
});
/** Labels become part of where the execution came from (its `execution.started` context). */
const originOf = (l: Record<string, string> | undefined) => (l && Object.keys(l).length ? { origin: { labels: l } } : {});
const labelFilter = v.optional(
  v.pipe(
    v.union([v.string(), v.array(v.string())]),
    v.transform((x) => (Array.isArray(x) ? x : [x])),
    v.check((xs) => xs.every((x) => x.indexOf(':') > 0), 'must be key:value'),
    // All must match, and an execution has one value per label: two for one key would match
    // nothing, not (as the last one won) the executions with the second.
    v.rawCheck(({ dataset, addIssue }) => {
      if (!dataset.typed) return;
      const seen = new Map<string, string>();
      for (const x of dataset.value) {
        const key = x.slice(0, x.indexOf(':'));
        const value = x.slice(x.indexOf(':') + 1);
        if ((seen.get(key) ?? value) !== value) return addIssue({ message: `names ${key} twice, with two values (an execution has one value per label)` });
        seen.set(key, value);
      }
    }),
    v.transform((xs) => Object.fromEntries(xs.map((x) => [x.slice(0, x.indexOf(':')), x.slice(x.indexOf(':') + 1)]))),
    v.description('started with this label, key:value (repeat for several: all of them)'),
  ),
);
const idParams = v.object({ id: integerText(1, MAX_ID) });
// The spec's own name for the status routes' parameter (GET /api/executions/{execution_id}): the
// OpenAPI document and a refusal's detail say it; the routes DESIGN.md adds under it keep {id}.
const statusParams = v.object({ execution_id: integerText(1, MAX_ID) });
const filterText = (description: string) => v.optional(v.pipe(v.string(), v.minLength(1), v.maxLength(1000), v.description(description)));
const startTime = (description: string) =>
  v.optional(
    v.pipe(
      StartTimeText,
      v.transform((text) => new Date(text)),
      v.description(description),
    ),
  );
// Exact: a misspelt filter (`?stauts=failed`) listed every execution, as if none were given.
const listQuery = exactObject({
  status: v.optional(oneOf(EXECUTION_STATUSES)),
  path: v.optional(v.pipe(v.string(), v.description('exact playbook path'))),
  path_prefix: filterText('playbook paths starting with this text'),
  started_after: startTime('started at or after this time (ISO 8601; a date alone is its UTC midnight)'),
  started_before: startTime('started before this time (ISO 8601)'),
  trigger: filterText('started by the trigger of this name (`execution.started` context `trigger.name`)'),
  requested_by: filterText('started by this caller (`execution.started` context `requested_by.sub`)'),
  parent: v.optional(v.pipe(integerText(1, MAX_ID), v.description('children of this execution'))),
  q: filterText('search: an execution id exactly, or text anywhere in the path (case-insensitive)'),
  label: labelFilter,
  limit: v.optional(integerText(1, 500), '50'),
  cursor: v.optional(
    v.pipe(
      v.string(),
      v.rawTransform(({ dataset, addIssue, NEVER }) => {
        const cursor = decodeExecutionCursor(dataset.value);
        if (cursor) return cursor;
        addIssue({ message: 'must be a next_cursor of this list (or an execution id)' });
        return NEVER;
      }),
      v.description('next_cursor of the previous page; an execution id continues after that execution'),
    ),
  ),
});
const IDEMPOTENCY_KEY_DOC =
  'Optional, 1 to 255 printable ASCII characters. The same key with the same body answers with the first answer (same execution_id) for at least 24 h, ' +
  'without starting again; with another body it is refused (422, code idempotency_key_reused). Scoped to the route and the caller.';
// A retry answers 201 (a new execution), stored with its key so that a repeat answers alike.
const RETRY_STARTED = 201;
const retryBody = v.optional(exactObject({ from_step: v.optional(v.pipe(v.string(), v.minLength(1), v.maxLength(MAX_STEP_NAME_CHARS))) }), {});
const cancelBody = v.optional(
  exactObject({
    reason: v.optional(v.pipe(v.string(), v.maxLength(MAX_CONTROL_REASON_CHARS))),
    cascade: v.optional(v.pipe(v.boolean(), v.description('false: child executions go on running (default true: they are cancelled too)')), true),
  }),
  {},
);
// About 19 years: far past any real age, and within PostgreSQL's integer minutes.
const MAX_CLEANUP_AGE_MINUTES = 10_000_000;
// Exact: `{"dryrun": true}` was a real cleanup (the misspelt flag dropped, dry_run false).
const cleanupBody = v.optional(
  exactObject({
    older_than_minutes: v.optional(integerIn(1, MAX_CLEANUP_AGE_MINUTES), 5),
    dry_run: v.optional(v.boolean(), false),
  }),
  {},
);

const startedAnswer = v.object({
  execution_id: integer,
  status: v.literal('started'),
  path: v.string(),
  catalog_id: integer,
  debounced: v.optional(v.pipe(v.literal(true), v.description('the start joined an open debounce window: the execution named (queued) runs with this payload unless a later start of the burst comes'))),
});
const executeAnswer = v.object({ ...startedAnswer.entries, resource_kind: v.picklist(['playbook', 'agent']) });
// A `playbook` task's timer (timer.set's context): absent on a step's own wait.
const TASK_TIMER_ENTRIES = {
  for: v.optional(v.pipe(v.picklist(['timeout', 'retry']), v.description('a `playbook` task\'s timer: `timeout` bounds its running child (timeout_seconds), `retry` is the delay before its next attempt'))),
  task: v.optional(v.pipe(v.string(), v.description('with `for`: the task whose timer it is'))),
  attempt: v.optional(v.pipe(integer, v.description('with `for`: the attempt it is for (the running one\'s timeout; the next one a retry starts)'))),
};
const executionDetailAnswer = v.object({
  ...executionAnswer.entries,
  retry_of: v.pipe(v.nullable(integer), v.description('the execution this one retries')),
  resumed_from: v.pipe(v.nullable(integer), v.description('the execution auto-resume restarted as this one (`restart` mode): the steps it replays ran there')),
  resumed_as: v.pipe(v.nullable(integer), v.description('the execution auto-resume restarted this one as (`restart` mode; its `resumed_from` names this one): where its work went on')),
  retried_as: v.pipe(v.array(integer), v.description('the executions that retry this one, oldest first')),
  waits: v.pipe(
    v.array(
      v.object({
        step: v.string(),
        seq: integer,
        kind: v.picklist(['timer', 'signal']),
        signal: v.nullable(v.string()),
        wake_at: v.nullable(time),
        approval_roles: v.nullable(v.array(v.string())),
        since: v.pipe(time, v.description('when it began (its wait was set)')),
        ...TASK_TIMER_ENTRIES,
      }),
    ),
    v.description(
      'what its steps wait for, by seq: a step\'s own `wait` (a timer, a signal), and a `playbook` task\'s own timers, which carry `for`, `task` and `attempt` (the step runs or retries its child: it does not wait for them)',
    ),
  ),
  waits_count: v.pipe(integer, v.description(`how many waits it has in all: \`waits\` lists the first ${EXECUTION_VIEW_WAITS_MAX} by seq`)),
  labels: v.pipe(ownKeysRecord(v.string(), v.string()), v.description('the labels it was started with')),
  requested_by: v.pipe(v.nullable(v.string()), v.description('who started it (the caller\'s subject: a token\'s, the gateway\'s, `local` without auth); null when a trigger or a parent did')),
  trigger: v.pipe(v.nullable(v.string()), v.description('the trigger that started it, by name; null when none did')),
  flow: v.pipe(
    v.nullable(v.object({ limit: v.nullable(v.string()), key: v.nullable(v.string()), priority: integer, defined: v.boolean(), not_before: v.nullable(time), queued_at: time, admitted_at: v.nullable(time) })),
    v.description('its admission (flow control) while it has one: the limit and key it is queued on (or holds a slot of, once admitted), whether that limit is `defined` (false: named by the playbook but never defined, so nothing is admitted until it is; a playbook\'s inline limit, and no limit, count as defined), its debounce window\'s close (not_before; null when it is not debounced)'),
  ),
  limit_waits: v.pipe(
    v.array(v.object({ step: v.string(), seq: integer, limit: v.string(), key: v.string(), defined: v.boolean(), since: time })),
    v.description('its commands waiting for room on their task\'s limit (flow control), by seq; `defined` false: the limit is named but not defined, and they wait until it is'),
  ),
  limit_waits_count: v.pipe(integer, v.description(`how many of its commands wait for room on a limit in all: \`limit_waits\` lists the first ${EXECUTION_VIEW_WAITS_MAX} by seq`)),
});
const listAnswer = v.object({
  executions: v.array(executionAnswer),
  count: integer,
  next_cursor: v.nullable(v.string()),
  counts: v.pipe(ownKeysRecord(v.string(), integer), v.description('by status')),
});
const cancelAnswer = v.object({
  status: v.picklist(['cancelled', 'already_finished']),
  execution_id: integer,
  execution_status: v.optional(v.pipe(v.picklist(EXECUTION_STATUSES), v.description('with already_finished: how it finished'))),
});
const retryAnswer = v.object({
  execution_id: integer,
  retry_of: integer,
  from_step: v.string(),
  replayed: v.pipe(v.array(v.string()), v.description('the steps that took their recorded outcome, in the order they ran')),
}) satisfies v.GenericSchema<unknown, Retried>;
// Its options are the body's: a query string's `?dry_run=true` was dropped and the cleanup ran
// for real, so a cleanup takes no query parameter at all.
const cleanupQuery = v.strictObject({}, 'is not read from the query string: send older_than_minutes and dry_run in the JSON body');
const cleanupAnswer = v.object({
  cancelled_count: integer,
  execution_ids: v.array(integer),
  executions: v.array(v.object({ execution_id: integer, path: v.string(), parent_execution_id: v.nullable(integer), started_at: time })),
  message: v.string(),
}) satisfies v.GenericSchema<unknown, CleanupResult>;

/** Starting, reading, listing and cancelling executions. */
export async function executionRoutes(app: FastifyInstance, deps: AppDeps): Promise<void> {
  const starter = new StartBatcher(deps);
  const idempotent = new IdempotentStarts(deps);
  const retries = new IdempotentStarts(deps, RETRY_STARTED);
  const keyHeader = { type: 'object', properties: { [IDEMPOTENCY_KEY_HEADER.toLowerCase()]: { type: 'string', description: IDEMPOTENCY_KEY_DOC } } };

  app.post('/api/run/playbook', { schema: { tags: ['executions'], summary: 'Start an execution of the newest playbook at a path', body: jsonSchema(runBody), headers: keyHeader, response: withAnswerHeaders(responses({ 200: startedAnswer }), 200, REPLAYED_HEADER_DOC) }, config: { access: { level: 'operator' } } }, async (req, reply) => {
    const body = req.body as v.InferOutput<typeof runBody>;
    const requestedBy = req.identity ?? undefined;
    return idempotent.answer(req, reply, async (claim) => {
      const answer = (s: Started) => ({ execution_id: s.executionId, status: 'started', path: s.path, catalog_id: s.catalogId, ...(s.debounced ? { debounced: true } : {}) });
      const idempotency = claim && { ...claim, answer };
      const own = { ...originOf(body.labels), ...(body.priority !== undefined ? { priority: body.priority } : {}), as: 'playbook' as const };
      // `as: playbook`: an agent is refused (422), as on /api/execute without resource_kind agent.
      // workload.access_token is sealed where every start passes (actors/start-execution.ts).
      const payload = body.payload;
      if (body.version === undefined) return answer(await starter.start({ path: body.path, payload, requestedBy, idempotency, ...own }));
      const entry = await getCatalogEntry(deps.db, body.path, body.version);
      if (!entry) throw notFound(`playbook ${body.path} version ${body.version}`);
      // Refused as a start of its path is (actors/start-execution.ts): an MCP document is never run.
      if (entry.kind === 'mcp') throw new ServiceError('unprocessable', `${body.path} is an MCP server document (kind Mcp), not a playbook`);
      return answer(await starter.start({ compiled: deps.cache.compile(entry), payload, requestedBy, idempotency, ...own }));
    });
  });

  app.post('/api/execute', { schema: { tags: ['executions'], summary: 'Start an executable catalog entry (playbook or agent)', body: jsonSchema(executeBody), headers: keyHeader, response: withAnswerHeaders(responses({ 200: executeAnswer }), 200, REPLAYED_HEADER_DOC) }, config: { access: { level: 'operator' } } }, async (req, reply) => {
    const body = req.body as v.InferOutput<typeof executeBody>;
    return idempotent.answer(req, reply, async (claim) => {
      const kind = body.resource_kind ?? 'playbook';
      // The newest version decides (DESIGN "The life of an execution"): an older version of
      // another kind is never started in its place.
      const entry = await getCatalogEntry(deps.db, body.path);
      if (!entry || entry.kind === 'mcp') throw new ServiceError('not_found', 'Executable catalog entry not found');
      const compiled = deps.cache.compile(entry);
      const refused = kindRefusal(compiled, kind);
      if (refused) throw refused;
      const answer = (s: Started) => ({ execution_id: s.executionId, status: 'started', path: entry.path, catalog_id: entry.catalog_id, resource_kind: entry.kind, ...(s.debounced ? { debounced: true } : {}) });
      const payload = { ...body.workload, ...body.payload };
      return answer(await starter.start({ compiled, as: kind, payload, requestedBy: req.identity ?? undefined, idempotency: claim && { ...claim, answer }, ...originOf(body.labels), ...(body.priority !== undefined ? { priority: body.priority } : {}) }));
    });
  });

  const getOne = async (req: { params: unknown }) => {
    const { execution_id: id } = req.params as v.InferOutput<typeof statusParams>;
    const row = await getExecutionWithRetryLinks(deps.db, id);
    if (!row) throw notFound(`execution ${id}`);
    return { ...presentExecution(row), retry_of: row.retry_of, resumed_from: row.resumed_from, resumed_as: row.resumed_as, retried_as: row.retried_as, waits: row.waits, waits_count: row.waits_count, labels: row.labels, requested_by: row.requested_by, trigger: row.trigger, flow: row.flow, limit_waits: row.limit_waits, limit_waits_count: row.limit_waits_count };
  };
  app.get('/api/executions/:execution_id', { schema: { tags: ['executions'], summary: 'Execution status', params: jsonSchema(statusParams), response: responses({ 200: executionDetailAnswer }) }, config: { access: { level: 'viewer' } } }, getOne);
  app.get('/api/execution/:execution_id', { schema: { tags: ['executions'], summary: 'Execution status (alias)', params: jsonSchema(statusParams), response: responses({ 200: executionDetailAnswer }) }, config: { access: { level: 'viewer' } } }, getOne);

  app.get(
    '/api/executions',
    {
      schema: {
        tags: ['executions'],
        summary: 'Executions, newest first by start time, filtered, paged by cursor, with counts per status',
        description:
          'Ordered by start time then id, newest first. `next_cursor` (null on the last page) continues the list after the page: executions started meanwhile never shift it. ' +
          '`counts` has every status with how many executions match the filters other than `status`, each counted up to ' +
          `${EXECUTION_COUNT_CAP} (a count of ${EXECUTION_COUNT_CAP} means at least that many). A parameter sent empty (\`?status=&limit=\`) is taken as not sent; one the list does not know is refused (422, naming it).`,
        querystring: jsonSchema(listQuery),
        response: responses({ 200: listAnswer }),
      },
      config: { access: { level: 'viewer' } },
      preValidation: emptyQueryValuesAbsent,
    },
    async (req) => {
      const { status, limit, cursor, ...query } = req.query as v.InferOutput<typeof listQuery>;
      const filter: ExecutionListFilter = {
        path: query.path,
        pathPrefix: query.path_prefix,
        startedAfter: query.started_after,
        startedBefore: query.started_before,
        parent: query.parent,
        trigger: query.trigger,
        requestedBy: query.requested_by,
        q: query.q,
        labels: query.label,
      };
      const [{ rows, more }, counts] = await Promise.all([
        listExecutions(deps.db, { ...filter, status, limit, cursor }),
        countExecutionsByStatus(deps.db, filter, EXECUTION_STATUSES),
      ]);
      const last = rows.at(-1);
      return {
        executions: rows.map(presentExecution),
        count: rows.length,
        // null on the last page, so a client pages until null without a last, empty request.
        next_cursor: more && last ? encodeExecutionCursor(last.started_key, last.execution_id) : null,
        counts,
      };
    },
  );

  app.post('/api/executions/:id/cancel', { schema: { tags: ['executions'], summary: 'Cancel a running or paused execution and (cascade, the default) its children', params: jsonSchema(idParams), body: jsonSchema(cancelBody), response: responses({ 200: cancelAnswer }) }, config: { access: { level: 'operator' } } }, async (req) => {
    const { id } = req.params as v.InferOutput<typeof idParams>;
    const body = (req.body ?? {}) as v.InferOutput<typeof cancelBody>;
    const out = await cancelExecution(deps, id, { reason: body.reason ?? 'cancelled by request', requested_by: req.identity, ...(body.cascade === false ? { cascade: false } : {}) });
    if (out.cancelled) return { status: 'cancelled', execution_id: id };
    if (!out.status) throw notFound(`execution ${id}`);
    return { status: 'already_finished', execution_id: id, execution_status: out.status };
  });

  app.post(
    '/api/executions/:id/retry',
    {
      schema: {
        tags: ['executions'],
        summary: 'Retry a finished execution from a step: a new execution that takes the recorded outcomes of the steps before it',
        description:
          'Starts a new execution of the same catalog version and start payload. Every step that completed (ok, or a wait that timed out) before `from_step` (default: the step whose failure ended the execution; for a cancelled one, the step the cancel cut short, or its entry step when none had begun) takes its recorded outcome (event `step.replayed`) instead of running again, each of its runs in order (a cycle of steps that ran one three times replays it three times). 422 when `from_step` is not a step of the playbook, or one the execution never reached. A retry that began no step (cancelled while queued) is retried by default from its own `from_step`, with the outcomes it was to replay. ' +
          'The new execution\'s `execution.started` context has `retry_of`; the old one answers `retried_as`. 409 while the execution has not finished. ' +
          'With an `Idempotency-Key`, a repeat to this execution (a lost answer sent again) is answered with the first retry and starts nothing.',
        params: jsonSchema(idParams),
        body: jsonSchema(retryBody),
        headers: keyHeader,
        response: withAnswerHeaders(responses({ [RETRY_STARTED]: retryAnswer }), RETRY_STARTED, { location: 'the new execution: /api/executions/{execution_id}', ...REPLAYED_HEADER_DOC }),
      },
      config: { access: { level: 'operator' } },
    },
    async (req, reply) => {
      const { id } = req.params as v.InferOutput<typeof idParams>;
      const body = (req.body ?? {}) as v.InferOutput<typeof retryBody>;
      reply.code(RETRY_STARTED);
      const retried = await retries.answer(req, reply, (claim) => retryExecution(deps, id, body.from_step, req.identity ?? undefined, claim), body);
      // A replayed answer is the stored first one, which this route answered then.
      const { execution_id } = v.parse(retryAnswer, retried);
      reply.header('location', `/api/executions/${execution_id}`);
      return retried;
    },
  );

  app.post(
    '/api/executions/cleanup',
    {
      config: { access: { level: 'operator' } },
      schema: {
        tags: ['executions'],
        summary: 'Cancel stuck executions: no terminal event, started over older_than_minutes ago',
        description: 'Running ones only: a paused or queued execution, and every execution of a tree (a root and its descendants) that holds one, waits on purpose and is left alone. Each gets `execution.cancelled` (reason `cleanup`): its pending and claimed commands and its children are cancelled, its local/shared keychain entries removed. The answer lists those too: the live descendants the cancels took along, however young. `dry_run` lists the same executions and changes nothing.',
        querystring: jsonSchema(cleanupQuery),
        body: jsonSchema(cleanupBody),
        response: responses({ 200: cleanupAnswer }),
      },
    },
    async (req) => {
      const body = (req.body ?? {}) as v.InferOutput<typeof cleanupBody>;
      return cleanupStuckExecutions(deps, { olderThanMinutes: body.older_than_minutes, dryRun: body.dry_run, requestedBy: req.identity ?? undefined });
    },
  );
}
