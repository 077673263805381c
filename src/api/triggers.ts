import type { FastifyInstance } from 'fastify';
import * as v from 'valibot';
import type { AppDeps } from '../app-deps.ts';
import { isCalendarDate, isoTimeInRange } from '../calendar-time.ts';
import { ServiceError } from '../errors.ts';
import { backfill, fireByHand, pauseTrigger, scheduleNow, triggerViews, type Backfilled, type TriggerView } from '../triggers/trigger-operations.ts';
import { requireReachablePath, requireReachableTriggerName } from './catalog-path.ts';
import { jsonObject } from './executions.ts';
import { anyObject, integer, responses, time } from './answers.ts';
import { describeIssues, exactObject, jsonSchema, oneOf } from './validation.ts';
import { emptyQueryValuesAbsent } from './empty-query-values.ts';
import { documentedAt } from './documented-url.ts';

const ACTIONS = ['pause', 'resume', 'fire', 'backfill'] as const;
type Action = (typeof ACTIONS)[number];
const listQuery = exactObject({ kind: v.optional(oneOf(['schedule', 'webhook', 'nats'])) });
const ISO_TIME = 'must be an ISO 8601 time with a timezone, e.g. 2026-01-01T00:00:00Z';
const YEARS = 'must be in the years 0001 to 9999';
/**
 * A real instant: JavaScript rolls 2026-02-30 over to March, and PostgreSQL has no year 0000,
 * so a time is checked here, naming its field, before anything is computed or stored from it.
 */
const isoTime = v.pipe(
  v.string(ISO_TIME),
  v.isoTimestamp(ISO_TIME),
  v.check((text) => !Number.isNaN(Date.parse(text)), ISO_TIME), // `+05` offsets pass the pattern, not Date
  v.check((text) => Number(text.slice(0, 4)) >= 1, YEARS),
  v.check(isCalendarDate, 'must name a real day (2026-02-30 is none)'),
  v.transform((text) => new Date(text)),
  v.check((at) => isoTimeInRange(at.getTime()) !== null, YEARS), // an offset may take 0001-01-01 into year 0
);
const notArray = v.custom<unknown>((input) => !Array.isArray(input), 'must be a JSON object, not an array');
// Exact: a misspelt `fire_key` dropped would start a new execution at every retry of the fire.
// A blank one names no fire (a webhook's blank delivery id counts as none).
const fireBody = v.optional(v.pipe(notArray, exactObject({ payload: v.optional(jsonObject), fire_key: v.optional(v.pipe(v.string(), v.minLength(1), v.maxLength(255), v.check((k) => k.trim() !== '', 'must not be blank'))) })), {});
const backfillBody = v.pipe(notArray, exactObject({ from: isoTime, to: isoTime }));
// Pause and resume take nothing: a field sent (`{"paused": false}` to resume, a `reason`) is refused, not dropped.
const controlBody = v.optional(v.pipe(notArray, exactObject({})), {});

const triggerAnswer = v.object({
  path: v.string(),
  name: v.string(),
  kind: v.picklist(['schedule', 'webhook', 'nats']),
  state: v.picklist(['active', 'paused']),
  catalog_id: integer,
  description: v.nullable(v.string()),
  next_fires: v.array(time),
  last_fire: v.nullable(v.object({ fire_key: v.string(), execution_id: v.nullable(integer), at: time, outcome: v.string() })),
  fires: integer,
  skipped: integer,
  errors: integer,
  last_error: v.nullable(v.string()),
  subscription_problem: v.pipe(
    v.nullable(v.object({ message: v.string(), since: time })),
    v.description('a NATS trigger that is not consuming: why (its credential, server or stream), as a server last found it, and since when; null while it consumes, and for other kinds'),
  ),
  spec: anyObject,
}) satisfies v.GenericSchema<unknown, TriggerView>;
const backfilledAnswer = v.pipe(
  v.object({ execution_ids: v.array(integer), skipped: integer, refused: v.array(v.object({ fire_key: v.string(), error: v.string() })) }),
  v.description('backfill: the executions started, the times made before (skipped: a range again), and the fires of this backfill its payload or the inputs refused (recorded), with why'),
) satisfies v.GenericSchema<unknown, Backfilled>;
// `debounced`: the fire joined an open debounce window (execution_id is the window's, queued), as a start's answer says.
const firedAnswer = v.object({ execution_id: v.nullable(integer), duplicate: v.boolean(), fire_key: v.string(), outcome: v.picklist(['started', 'skipped']), debounced: v.boolean() });

/** `{path}/{name}/{action}` from the wildcard (a path has slashes; the name and the action have none). */
function target(tail: string): { path: string; name: string; action: Action } {
  const parts = tail.split('/');
  const action = parts.pop();
  const name = parts.pop();
  const path = parts.join('/');
  if (!path || !name || !ACTIONS.includes(action as Action)) {
    throw new ServiceError('not_found', `no route: POST /api/triggers/{path}/{name}/{${ACTIONS.join('|')}}`);
  }
  // A path or name no registration takes is no unknown trigger: 422 naming it (as the catalog's routes), not a 404 echoing it.
  requireReachablePath(path);
  requireReachableTriggerName(name);
  return { path, name, action: action as Action };
}

/** The live triggers of the catalog: list, pause, resume, fire by hand, backfill (DESIGN.md "Triggers"). */
export async function triggerRoutes(app: FastifyInstance, deps: AppDeps): Promise<void> {
  app.get(
    '/api/triggers',
    { schema: { tags: ['triggers'], summary: 'Every live trigger: state, next fires, last fire, counts', querystring: jsonSchema(listQuery), response: responses({ 200: v.object({ triggers: v.array(triggerAnswer), count: integer }) }) }, config: { access: { level: 'viewer' } }, preValidation: emptyQueryValuesAbsent },
    async (req) => {
      const { kind } = req.query as v.InferOutput<typeof listQuery>;
      const triggers = await triggerViews(deps, kind);
      return { triggers, count: triggers.length };
    },
  );

  app.post(
    '/api/triggers/*',
    {
      schema: {
        tags: ['triggers'],
        summary: 'POST /api/triggers/{path}/{name}/pause|resume|fire|backfill',
        description:
          'pause and resume (no body, or `{}`: a field is 422) answer the trigger. fire `{payload?, fire_key?}` answers 202 `{execution_id, duplicate, fire_key, outcome, debounced}` (`debounced`: it joined an open debounce window, whose execution is the one named): a schedule renders its own payload (scheduled_time now), `payload` merges over it; a fire_key seen before starts nothing, and the fire_key of a schedule may not be one of its times after now (422). backfill `{from, to}` (schedules) starts the fires of the past range [from, to), at most 1,000, and answers `{execution_ids, skipped, refused}`: a range again starts nothing new (skipped); `refused` lists its fires the payload or the inputs refused, with why. 422 naming the field for a time that is not real (2026-02-30, year 0000) or after now, and for a body that is not an object.',
        response: responses({ 200: v.union([triggerAnswer, backfilledAnswer]), 202: firedAnswer }),
      },
      config: { access: { level: 'operator' }, readsBody: true, swaggerTransform: documentedAt('/api/triggers/{path}/{name}/{action}') },
    },
    async (req, reply) => {
      const { path, name, action } = target((req.params as { '*': string })['*']);
      switch (action) {
        case 'pause':
        case 'resume':
          parse(controlBody, req.body);
          return pauseTrigger(deps, path, name, action === 'pause');
        case 'fire': {
          const body = parse(fireBody, req.body);
          reply.code(202);
          return fireByHand(deps, path, name, { payload: body.payload, fireKey: body.fire_key });
        }
        case 'backfill': {
          const { from, to } = parse(backfillBody, req.body);
          // A past range only: a future time started now would be swallowed later, when the
          // schedule fires it, as a duplicate of this early start.
          const now = scheduleNow(deps);
          const errors = Object.entries({ from, to })
            .filter(([, at]) => at.getTime() > now.getTime())
            .map(([field]) => `${field}: is after now (${now.toISOString()}): backfill starts past fires only; the schedule fires the later ones itself`);
          if (errors.length) throw new ServiceError('unprocessable', { message: 'invalid body', errors });
          return backfill(deps, path, name, from, to);
        }
      }
    },
  );
}

/** A body checked against `schema`, or 422 naming each field, `body` for the whole (the wildcard route serves several bodies). */
function parse<S extends v.GenericSchema>(schema: S, body: unknown): v.InferOutput<S> {
  // One problem per field: a time that is no time is not also said to be in no year.
  const parsed = v.safeParse(schema, body, { abortPipeEarly: true });
  if (parsed.success) return parsed.output;
  const errors = describeIssues(parsed.issues).map((e, i) => (parsed.issues[i].path?.length ? e : `body: ${e}`));
  throw new ServiceError('unprocessable', { message: 'invalid body', errors });
}
