import type { FastifyInstance } from 'fastify';
import { isTerminalExecutionStatus } from '../../machines/statuses.ts';
import * as v from 'valibot';
import type { AppDeps } from '../app-deps.ts';
import { capOutput } from '../cap-output.ts';
import { heldStepCommands } from '../db/command.repo.ts';
import { getExecution, loadStepEvents } from '../db/execution.repo.ts';
import { childAdmissions, getExecutionWithRetryLinks } from '../db/execution-view.repo.ts';
import { EVENT } from '../../machines/event-types.ts';
import { notFound } from '../errors.ts';
import { integer, responses, time } from './answers.ts';
import { stepRunsView, withChildAdmissions, withHeldClaims, type RunView } from './step-runs-view.ts';
import { integerText, jsonSchema, MAX_ID } from './validation.ts';
import { MAX_STEP_NAME_CHARS } from '../dsl/step-name-limit.ts';

const params = v.object({ id: integerText(1, MAX_ID), step: v.pipe(v.string(), v.minLength(1), v.maxLength(MAX_STEP_NAME_CHARS)) });
// A step's events read at most: a loop of thousands of items is listed up to here.
export const MAX_STEP_EVENTS = 20_000;

const attemptAnswer = v.object({
  attempt: integer,
  started_at: v.nullable(time),
  duration_ms: v.nullable(v.number()),
  delay_ms: v.pipe(v.nullable(v.number()), v.description('the retry\'s wait before it, from the end of the attempt before to its start; null for the first, when a time is not known, or when the attempt before it is not listed (of a task retried more than 21 times, the first and last ten failed ones are)')),
  status: v.picklist(['ok', 'error']),
  error: v.unknown(),
  output: v.pipe(v.unknown(), v.description('as the tool gave it, capped at SVC_TASK_OUTPUT_BYTES (`{truncated, bytes, preview}` beyond)')),
});
const runAnswer = v.object({
  seq: v.pipe(v.nullable(integer), v.description('null: a wait that ended as it began (`at_once`), which never waited under a seq')),
  loop_index: v.nullable(integer),
  command_id: v.nullable(integer),
  worker_id: v.nullable(v.string()),
  status: v.string(),
  issued_at: v.pipe(v.nullable(time), v.description('when its work was issued: a command\'s issue (it waited for a free worker, or room on its task\'s limit, until `claimed_at`; of a `claim_attempt` past 1, the lost holders had it too), a child\'s start (it waited on its playbook\'s `concurrency`, `queued`, until `started_at`), a wait\'s begin')),
  claimed_at: v.nullable(time),
  claim_attempt: v.pipe(
    v.nullable(integer),
    v.description('which claim of its command `worker_id` and `claimed_at` are of: 1, or N when it was claimed again after the worker holding it was lost (the command reaper handed it on); from `issued_at` to `claimed_at` then holds the lost holders\' time, not only a wait for a worker. Null for what no worker claimed'),
  ),
  started_at: v.nullable(time),
  finished_at: v.nullable(time),
  child_execution_id: v.nullable(integer),
  tasks: v.array(v.object({ task: v.string(), kind: v.nullable(v.string()), attempts: v.array(attemptAnswer) })),
  at_once: v.pipe(
    v.nullable(v.picklist(['kept_signal', 'until_failed'])),
    v.description('a wait that ended as it began: it took a signal sent and kept (`buffer: true`) before it waited (`completed`), or its `until` did not render to a time (`failed`, `error` says why); null for every other run'),
  ),
  error: v.pipe(v.unknown(), v.description("a wait's error (its `until` did not render, its signal timed out); null otherwise (a task's is in its attempts)")),
}) satisfies v.GenericSchema<unknown, RunView>;
const stepRunsAnswer = v.object({
  execution_id: integer,
  step: v.string(),
  runs: v.array(runAnswer),
  truncated: v.pipe(v.boolean(), v.description(`the step has more than ${MAX_STEP_EVENTS} events: the runs of the first ones`)),
  replayed_from: v.pipe(
    v.nullable(integer),
    v.description('a retry from a later step took this step\'s outcome from the execution it retries (`retry_of`), or auto-resume\'s successor from the execution it restarted (`resumed_from`), instead of running it: its runs are there; null when the step was not replayed'),
  ),
});

/** GET /api/executions/{id}/steps/{step}: a step's runs with their true times, task attempts, outputs and errors. */
export async function stepRunRoutes(app: FastifyInstance, deps: AppDeps): Promise<void> {
  app.get(
    '/api/executions/:id/steps/:step',
    {
      schema: {
        tags: ['executions'],
        summary: "A step's runs: commands, child executions or waits with claim, start and end times, and each task's attempts with output and error",
        description:
          'Times are the worker\'s true ones (`context.at` of its events: the server\'s receive time less the worker\'s monotonic age of each moment), else when the event was stored. ' +
          'Output per attempt: shell {exit_code, stdout, stderr}, http {status, headers, body}, postgres {rows, row_count}, mcp the tool result; secrets masked by the worker; ' +
          'each capped at SVC_TASK_OUTPUT_BYTES (`{truncated, bytes, preview}` beyond). ' +
          'A child waiting on its playbook\'s `concurrency` is `queued` from `issued_at` (its start) until it is admitted (`started_at`), then `running` (`paused` while it is paused: a pause of its parent does not pause it, its own does), then its own end\'s status. ' +
          'A command is `pending` from `issued_at` until a worker claims it, `claimed` (with its worker and claim time, read from the command while no report has come), `running`, then `completed` or `failed`, or `cancelled` when the execution ended before it did (one a worker held then keeps that `worker_id` and `claimed_at`: its task may have run; a report after the cancel is in the log only). ' +
          'A wait (a timer or a signal) is `waiting` from when it was set, then `completed` (fired, signalled) or `failed` (timed out) as the step ended, or `cancelled` when the execution ended first; ' +
          'one that ended as it began (a signal kept from before taken at once, an `until` that did not render to a time) is a run of no seq, `at_once` saying which, started and finished when the step was entered.',
        params: jsonSchema(params),
        response: responses({ 200: stepRunsAnswer }),
      },
      config: { access: { level: 'viewer' } },
    },
    async (req) => {
      const { id, step } = req.params as v.InferOutput<typeof params>;
      const row = await getExecution(deps.db, id);
      if (!row) throw notFound(`execution ${id}`);
      const compiled = await deps.cache.get(deps.db, row.catalog_id);
      if (!compiled.playbook.workflow.some((s) => s.step === step)) throw notFound(`step ${step} of ${row.path}`);
      // One more than is shown: whether the step has more than MAX_STEP_EVENTS, not exactly as many.
      const loaded = await loadStepEvents(deps.db, id, step, MAX_STEP_EVENTS + 1);
      const events = loaded.slice(0, MAX_STEP_EVENTS);
      const cap = (output: unknown) => capOutput(output, deps.config.SVC_TASK_OUTPUT_BYTES);
      const ended = isTerminalExecutionStatus(row.status);
      const viewed = stepRunsView(events, cap, ended);
      // A child's queue time is in its own log (execution.admitted), not its parent's.
      const runs = withChildAdmissions(viewed, await childAdmissions(deps.db, viewed.flatMap((r) => (r.child_execution_id === null ? [] : [r.child_execution_id]))));
      // A held command's claim is read from its row (the log has it after its first report); once ended, a cancelled one's.
      // A replayed step has no run here: the answer says where it ran (a step replayed there too says
      // so in turn): a retry's in the execution it retries, auto-resume's successor's in the one it restarted.
      const links = events.some((e) => e.event_type === EVENT.stepReplayed) ? await getExecutionWithRetryLinks(deps.db, id) : undefined;
      const replayedFrom = links ? (links.retry_of ?? links.resumed_from) : null;
      return {
        execution_id: id,
        step,
        runs: withHeldClaims(runs, await heldStepCommands(deps.db, id, step, ended)),
        truncated: loaded.length > MAX_STEP_EVENTS,
        replayed_from: replayedFrom,
      };
    },
  );
}
