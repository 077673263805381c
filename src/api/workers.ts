import type { FastifyInstance } from 'fastify';
import * as v from 'valibot';
import { randomUUID } from 'node:crypto';
import { recordClaims } from '../../actors/publish.ts';
import type { AppDeps } from '../app-deps.ts';
import { claimCommand, claimNextCommands, getCommand, toStopAmong } from '../db/command.repo.ts';
import { deregisterWorkerPool, heartbeatWorkerPool, listWorkerPools, registerWorkerPool } from '../db/runtime.repo.ts';
import { ServiceError, notFound } from '../errors.ts';
import type { ClaimAnswer, ClaimRequest, HeartbeatAnswer, HeartbeatRequest, PresentedCommand, ReportAnswer } from '../protocol.ts';
import { reportBody, requestId, workerName, type ValidReport } from './worker-desk.ts';
import { jsonObject, MAX_LABELS } from './executions.ts';
import { anyObject, integer, responses, time } from './answers.ts';
import { commandAnswer, presentCommand } from './present.ts';
import { integerIn, integerText, jsonSchema, MAX_ID, MAX_INT4 } from './validation.ts';
import { TERMINAL_COMMAND_STATUSES } from '../../machines/command.machine.ts';
import { COMMAND_RULES } from '../../machines/command-rules.ts';

// Labels are answered with every pool list (GET /api/worker/pools): bounded as an execution's are
// (400,000 were taken and stored). A worker sends two (host, pid).
const poolLabels = v.pipe(jsonObject, v.check((l) => Object.keys(l).length <= MAX_LABELS, `must hold at most ${MAX_LABELS} labels`));
const registerBody = v.object({ name: workerName, capacity: v.optional(integerIn(0, MAX_INT4), 1), labels: v.optional(poolLabels, {}) });
const heartbeatBody = v.object({
  name: workerName,
  status: v.optional(v.picklist(['ready', 'draining']), 'ready'),
  // Every command the pool holds (running, queued, finished and not yet reported). Absent: the
  // pool does not say, and none of its claims counts as orphaned (see ClaimPolicy).
  running: v.optional(v.pipe(v.array(integerIn(1, MAX_ID)), v.maxLength(4096))),
}) satisfies v.GenericSchema<unknown, HeartbeatRequest>;
const nameBody = v.object({ name: workerName });
const claimByIdParams = v.object({ id: integerText(1, MAX_ID) });
// `execution_id`: the command's execution, when the claimer knows it (a notification names it):
// the claim then reaches the row by it too, and a command of another execution is not found.
const claimByIdBody = v.object({ worker_id: workerName, execution_id: v.optional(integerIn(1, MAX_ID)) });
const MAX_WAIT_MS = 30_000;
const claimNextBody = v.object({
  worker_id: workerName,
  request_id: v.optional(requestId),
  retry: v.optional(v.boolean(), false),
  max: v.optional(integerIn(1, 256), 1),
  wait_ms: v.optional(integerIn(0, MAX_WAIT_MS), 0),
}) satisfies v.GenericSchema<unknown, ClaimRequest>;
const registeredAnswer = v.object({ status: v.literal('registered'), name: v.string(), runtime_id: integer });
const heartbeatAnswer = v.object({
  status: v.literal('ok'),
  name: v.string(),
  cancelled: v.pipe(v.array(integer), v.description('those of its running commands that were cancelled: stop them')),
  superseded: v.pipe(v.array(integer), v.description('those of its running commands it no longer holds (taken over by another claim after it went silent): stop them; their reports are refused')),
}) satisfies v.GenericSchema<unknown, HeartbeatAnswer>;
const deregisteredAnswer = v.object({ status: v.literal('deregistered'), name: v.string() });
const poolsAnswer = v.object({
  pools: v.array(v.object({ name: v.string(), status: v.picklist(['ready', 'draining', 'stopped', 'held']), capacity: v.nullable(integer), labels: anyObject, heartbeat_at: time, created_at: time })),
  count: integer,
});
const claimAnswer = v.object({ commands: v.array(commandAnswer) }) satisfies v.GenericSchema<unknown, ClaimAnswer>;
const reportAnswer = v.object({
  status: v.literal('ok'),
  results: v.pipe(
    v.array(v.object({ event_id: v.nullable(integer), error: v.optional(v.string()), detail: v.optional(v.string()) })),
    v.description("one per reported event, in order: its event_id, or null with the refusal's code (`error`) and `detail`"),
  ),
  commands_generated: integer,
  commands: v.pipe(v.array(commandAnswer), v.description('the commands claimed with the report')),
});

/** Worker registry, command claims (by id, or next-available with long poll) and the combined report+claim call. */
export async function workerRoutes(app: FastifyInstance, deps: AppDeps): Promise<void> {
  const desk = app.workerDesk;
  app.post('/api/worker/pool/register', { schema: { tags: ['workers'], summary: 'Register a worker pool', body: jsonSchema(registerBody), response: responses({ 200: registeredAnswer }) }, config: { access: { level: 'worker' } } }, async (req) => {
    const b = req.body as v.InferOutput<typeof registerBody>;
    const row = await registerWorkerPool(deps.db, b);
    return { status: 'registered', name: row.name, runtime_id: row.runtime_id };
  });
  app.post('/api/worker/pool/heartbeat', { schema: { tags: ['workers'], summary: 'Worker pool heartbeat', body: jsonSchema(heartbeatBody), response: responses({ 200: heartbeatAnswer }) }, config: { access: { level: 'worker' } } }, async (req): Promise<HeartbeatAnswer> => {
    const b = req.body as v.InferOutput<typeof heartbeatBody>;
    const row = await heartbeatWorkerPool(deps.db, b.name, b.status, b.running ?? null);
    if (!row) throw notFound(`worker pool ${b.name}`);
    if (row === 'stopped') {
      throw new ServiceError('pool_stopped', { code: 'pool_stopped', message: `worker pool ${b.name} is deregistered; register it again to resume` });
    }
    // Tells the worker which of its running commands were cancelled or taken over, so it stops them.
    return { status: 'ok', name: row.name, ...(await toStopAmong(deps.db, b.running ?? [], b.name)) };
  });
  app.post('/api/worker/pool/deregister', { schema: { tags: ['workers'], summary: 'Deregister a worker pool', body: jsonSchema(nameBody), response: responses({ 200: deregisteredAnswer }) }, config: { access: { level: 'worker' } } }, async (req) => {
    const b = req.body as v.InferOutput<typeof nameBody>;
    if (!(await deregisterWorkerPool(deps.db, b.name))) throw notFound(`worker pool ${b.name}`);
    return { status: 'deregistered', name: b.name };
  });
  app.get('/api/worker/pools', { schema: { tags: ['workers'], summary: 'Registered worker pools', response: responses({ 200: poolsAnswer }) }, config: { access: { level: 'viewer' } } }, async () => {
    const rows = await listWorkerPools(deps.db);
    return {
      pools: rows.map((r) => ({ name: r.name, status: r.status, capacity: r.capacity, labels: r.labels, heartbeat_at: r.heartbeat_at.toISOString(), created_at: r.created_at.toISOString() })),
      count: rows.length,
    };
  });

  app.post('/api/commands/:id/claim', { schema: { tags: ['commands'], summary: 'Claim one command; exactly one claimer wins', params: jsonSchema(claimByIdParams), body: jsonSchema(claimByIdBody), response: responses({ 200: commandAnswer }) }, config: { access: { level: 'worker' } } }, async (req): Promise<PresentedCommand> => {
    const { id } = req.params as v.InferOutput<typeof claimByIdParams>;
    const { worker_id, execution_id } = req.body as v.InferOutput<typeof claimByIdBody>;
    const claimed = await claimCommand(deps.db, id, worker_id, desk.policy, execution_id);
    if (claimed) {
      // Its reports can then be routed from memory (actors/route-events.ts).
      recordClaims(deps, [claimed]);
      return presentCommand(claimed);
    }
    const row = await getCommand(deps.db, id);
    if (!row || (execution_id !== undefined && row.execution_id !== execution_id)) throw notFound(execution_id === undefined ? `command ${id}` : `command ${id} of execution ${execution_id}`);
    if (row.limit_name && COMMAND_RULES.claim.from.includes(row.status)) {
      throw new ServiceError('limit_wait', { code: 'limit_wait', message: `command ${id} waits for room on limit ${row.limit_name} (key ${JSON.stringify(row.limit_key ?? '')}); POST /api/worker/claim takes it when the key has room`, limit: row.limit_name, key: row.limit_key ?? '' });
    }
    if (row.status === COMMAND_RULES.pause.to) {
      throw new ServiceError('command_paused', { code: 'command_paused', message: `command ${id} waits for execution ${row.execution_id} to be resumed`, status: row.status });
    }
    const terminal = TERMINAL_COMMAND_STATUSES.includes(row.status);
    throw new ServiceError(terminal ? 'already_terminal' : 'active_claim', {
      code: terminal ? 'already_terminal' : 'active_claim',
      // The holder may be the caller itself (a claim sent again after a lost answer): say so, not "another".
      message: terminal ? `command ${id} is ${row.status}` : `command ${id} is ${row.status} by ${row.worker_id === worker_id ? `this worker (${worker_id}) already` : 'another worker'}`,
      status: row.status,
    });
  });

  app.post('/api/worker/claim', { schema: { tags: ['workers'], summary: 'Claim up to max pending commands, waiting up to wait_ms for one', body: jsonSchema(claimNextBody), response: responses({ 200: claimAnswer }) }, config: { access: { level: 'worker' } } }, async (req, reply): Promise<ClaimAnswer> => {
    const b = req.body as v.InferOutput<typeof claimNextBody>;
    const abort = new AbortController();
    // The response's close (not the request's, which fires once the body is read) tells of a client gone.
    reply.raw.on('close', () => {
      if (!reply.raw.writableFinished) abort.abort();
    });
    const deadline = Date.now() + b.wait_ms;
    const again = await desk.redelivered(b.worker_id, b.request_id, b.retry);
    if (again.length) return { commands: again.map(presentCommand) };
    // The token a unit's write claims for it under while it is parked (actors/parked-claims.ts).
    const token = b.request_id ?? randomUUID();
    // Its wait for a notification ends with its answer, not at its deadline: a claim still counted
    // as waiting keeps its server taking the NATS bus's announcements (src/bus/nats.ts), each of
    // which would then wake no one here and be lost for a server whose claimers do wait.
    const answered = new AbortController();
    try {
      for (;;) {
        // Listen before looking, so a notification between the two is not lost.
        const signal = AbortSignal.any([abort.signal, app.closingSignal]);
        // A claimer that went away (or a closing server) takes nothing: no one would run it.
        if (signal.aborted) return { commands: [] };
        const woken = deps.bus.next(deadline - Date.now(), AbortSignal.any([signal, answered.signal]));
        const claimed = await claimNextCommands(deps.db, b.worker_id, b.max, desk.reclaim(), b.request_id ?? null);
        if (claimed.length || Date.now() >= deadline || signal.aborted) {
          recordClaims(deps, claimed);
          return { commands: claimed.map(presentCommand) };
        }
        // Parked while it waits: a unit written on this server meanwhile hands it its new commands.
        const parking = deps.parked.park({ workerId: b.worker_id, max: b.max, token });
        if (!parking) {
          await woken;
          continue;
        }
        await Promise.race([woken, parking.handed]);
        // The unit that handed them recorded them (recordClaims, actors/publish.ts).
        const handed = await parking.leave();
        if (handed.length) return { commands: handed.map(presentCommand) };
      }
    } finally {
      answered.abort();
    }
  });

  app.post('/api/worker/report', { schema: { tags: ['workers'], summary: "Report a worker's events (one transaction) and claim next commands", body: jsonSchema(reportBody), response: responses({ 200: reportAnswer }) }, config: { access: { level: 'worker' } } }, (req): Promise<ReportAnswer> =>
    desk.report(req.body as ValidReport),
  );
}
