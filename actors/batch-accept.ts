import { randomUUID } from 'node:crypto';
import { acceptBatches, BATCH_KEY_CONSTRAINT, type AcceptedBatch, type AcceptInput, type AcceptOutcome, type AcceptResult } from '../src/db/batch-accept.repo.ts';
import { isDatabaseUnavailable } from '../src/db/classify-database-error.ts';
import { ServiceError } from '../src/errors.ts';
import type { BatchWake } from './batch-wake.ts';
import type { EngineDeps } from './engine-deps.ts';
import { GroupCommit } from './group-commit.ts';

/** A validated batch to accept. `idempotency_key` is the client's, if it sent one, in the namespace `key_scope` (its route and caller). */
export type BatchSubmission = {
  execution_id: number;
  worker_id: string | null;
  events: unknown[];
  key_scope: string;
  idempotency_key: string | null;
  /** sha256 of the canonical body: the same key with another body is refused. */
  body_hash: string;
};

/** The 202 answer. */
export type BatchAccepted = {
  status: 'accepted';
  request_id: string;
  event_ids: number[];
  commands_generated: number;
  queue_depth: number;
  duplicate: boolean;
  idempotency_key: string;
};

// Accept transactions in flight at once; batches arriving meanwhile go together in the next one.
const ACCEPTS_IN_FLIGHT = 3;
// Events one accept statement stores at most (its first batch always fits).
const MAX_EVENTS_PER_ACCEPT = 4_096;
// An accept statement is bounded by the time its batches have left, rounded down to one of four
// bounds (each bound has its few connections); less than the timeout over this is too little to
// store anything: refused at once.
const MIN_BOUND_DIVISOR = 8;
// The longest bound, a share of the timeout: a lone batch starts its statement within a few ms of
// its arrival, and may use nearly all of it (the largest batch, 2 MiB, stores in 0.13-0.2 s here).
const TOP_BOUND_SHARE = 7 / 8;

/**
 * The bounds an accept statement runs under, longest first: 7/8 of the timeout, then the timeout
 * over 2, 4 and 8. A batch always has less than the whole timeout left when its statement starts.
 */
function acceptBounds(timeoutMs: number): number[] {
  const bounds = [timeoutMs * TOP_BOUND_SHARE];
  for (let b = timeoutMs / 2; b >= timeoutMs / MIN_BOUND_DIVISOR; b /= 2) bounds.push(b);
  return bounds;
}

type Pending = BatchSubmission & { at: number };

/**
 * POST /api/events/batch: stores each batch (the row processors claim) with a `batch.accepted`
 * marker in its execution's log, in ONE statement (one round trip, its own commit), so an accepted
 * batch is never lost nor processed without its events, then wakes this server's processors.
 * Batches arriving together share the statement
 * (group commit). Past SVC_BATCH_ACCEPT_ENQUEUE_TIMEOUT_SECONDS PostgreSQL cancels it, nothing is
 * committed and the answer is 503 ack_timeout; a full queue answers 503 queue_unavailable, a
 * database away 503 enqueue_error.
 */
export class BatchAcceptor {
  readonly #deps: EngineDeps & { batchWake: BatchWake };
  readonly #group: GroupCommit<Pending, BatchAccepted>;
  readonly #timeoutMs: number;
  /** The statement bounds in use, longest first (acceptBounds). */
  readonly #bounds: readonly number[];

  constructor(deps: EngineDeps & { batchWake: BatchWake }) {
    this.#deps = deps;
    this.#timeoutMs = deps.config.SVC_BATCH_ACCEPT_ENQUEUE_TIMEOUT_SECONDS * 1000;
    this.#bounds = acceptBounds(this.#timeoutMs);
    this.#group = new GroupCommit({
      maxInFlight: ACCEPTS_IN_FLIGHT,
      weight: (p) => p.events.length,
      maxWeight: MAX_EVENTS_PER_ACCEPT,
      // The accepts of one execution take its row lock in turn: a second statement would only wait
      // in PostgreSQL holding a connection; it waits here and goes with the others that arrive.
      key: (p) => p.execution_id,
      run: (items) => this.#run(items),
    });
  }

  /**
   * Opens the accept connections of every bound and prepares the statement on each (an accept of
   * nothing, without the bound: a plan takes 17-67 ms on a fresh connection, measured with
   * EXPLAIN ANALYZE, more than the shorter bounds), so that no batch pays for connecting and
   * planning, one bound after the other, the most used first. Never throws.
   */
  async warm(): Promise<void> {
    try {
      for (const bound of this.#bounds) {
        await this.#deps.db.prepareBounded(bound, ACCEPTS_IN_FLIGHT, (q) => acceptBatches(q, [], 1));
      }
    } catch (err) {
      // Stopped before it finished (a short-lived server): nothing to report.
      if (!this.#deps.db.closed) this.#deps.log.warn({ err: err instanceof Error ? err.message : String(err) }, 'batch accept warm-up failed; the first batches prepare it');
    }
  }

  /** Accepts one batch; throws ServiceError (404, 422 for a reused key, 503) when it is not stored. */
  accept(submission: BatchSubmission): Promise<BatchAccepted> {
    return this.#group.submit({ ...submission, at: performance.now() });
  }

  // Never throws: every item gets its answer or its error (GroupCommit would retry them one by one).
  async #run(all: Pending[]): Promise<(BatchAccepted | Error)[]> {
    const started = performance.now();
    const timeoutMs = this.#timeoutMs;
    // Batches that waited out their deadline behind others are refused at once; the rest share
    // the earliest deadline among them.
    const late = all.filter((i) => i.at + timeoutMs <= started);
    const items = all.filter((i) => i.at + timeoutMs > started);
    if (!items.length) return all.map(() => this.#refusal(new AckTimeout()));
    const deadline = Math.min(...items.map((i) => i.at)) + timeoutMs;
    // One stored batch per key: a second submission with a key already in this group follows the first.
    const leaders = new Map<string, number>();
    const scoped = (item: Pending) => (item.idempotency_key === null ? undefined : `${item.key_scope}\n${item.idempotency_key}`);
    const inputs: AcceptInput[] = [];
    for (const [pos, item] of items.entries()) {
      const id = scoped(item);
      if (id !== undefined && leaders.has(id)) continue;
      if (id !== undefined) leaders.set(id, pos);
      const requestId = randomUUID();
      const key = item.idempotency_key ?? requestId;
      inputs.push({ pos, request_id: requestId, execution_id: item.execution_id, worker_id: item.worker_id, key_scope: item.key_scope, idempotency_key: key, body_hash: item.body_hash, events: item.events });
    }
    let stored: Map<number, AcceptOutcome | 'missing'>;
    try {
      stored = await this.#store(inputs, deadline);
    } catch (err) {
      return all.map((item) => this.#refusal(late.includes(item) ? new AckTimeout() : err));
    }
    // From each batch's arrival, as its ack timeout counts: waiting behind another accept of its execution included.
    const storedAt = performance.now();
    // Batches that followed one of another execution under their key when that execution does not
    // exist: nothing is stored under the key, and their own execution may exist (its 404 named it).
    const orphans: number[] = [];
    const answers = items.map((item, pos): BatchAccepted | Error | undefined => {
      const id = scoped(item);
      const leader = id === undefined ? pos : (leaders.get(id) ?? pos);
      const outcome = stored.get(leader);
      if ((!outcome || outcome === 'missing') && leader !== pos && items[leader].execution_id !== item.execution_id) {
        orphans.push(pos);
        return undefined;
      }
      if (!outcome || outcome === 'missing') return new ServiceError('not_found', `execution ${item.execution_id} not found`);
      if (outcome.kind === 'full') {
        const max = this.#deps.config.SVC_BATCH_ACCEPT_QUEUE_MAXSIZE;
        return new ServiceError('queue_unavailable', { code: 'queue_unavailable', message: `the batch queue holds ${outcome.depth} batches, its limit (SVC_BATCH_ACCEPT_QUEUE_MAXSIZE=${max}); retry later` });
      }
      const duplicate = outcome.kind === 'duplicate' || leader !== pos;
      if (duplicate && outcome.batch.body_hash !== item.body_hash) {
        return new ServiceError('unprocessable', {
          code: 'idempotency_key_reused',
          message: `Idempotency-Key ${JSON.stringify(outcome.batch.idempotency_key)} was used for a different body (request ${outcome.batch.request_id}); a new batch needs a new key`,
          errors: ['Idempotency-Key: already used with a different request body'],
        });
      }
      if (!duplicate) this.#deps.metrics.batchEnqueueLatency.observe((storedAt - item.at) / 1000);
      return answer(outcome.batch, duplicate);
    });
    // Accepted on their own (a rare second statement, within their own deadlines: #run refuses
    // the late ones); each pass answers at least its first batch, so this ends.
    const again = orphans.length ? await this.#run(orphans.map((pos) => items[pos])) : [];
    for (const [i, pos] of orphans.entries()) answers[pos] = again[i];
    return all.map((item) => (late.includes(item) ? this.#refusal(new AckTimeout()) : (answers[items.indexOf(item)] ?? this.#refusal(new Error('batch left unanswered')))));
  }

  /** Stores the batches with one statement, committed within the deadline or not at all. */
  async #store(inputs: AcceptInput[], deadline: number): Promise<Map<number, AcceptOutcome | 'missing'>> {
    const { db, config, snapshots } = this.#deps;
    const remaining = deadline - performance.now();
    const boundMs = this.#bounds.find((b) => b <= remaining);
    if (boundMs === undefined) throw new AckTimeout();
    const q = db.bounded(boundMs, ACCEPTS_IN_FLIGHT);
    let done: AcceptResult | undefined;
    for (let attempt = 1; !done; attempt++) {
      try {
        done = await acceptBatches(q, inputs, config.SVC_BATCH_ACCEPT_QUEUE_MAXSIZE);
      } catch (err) {
        // Cancelled by its statement_timeout: the deadline; nothing was committed.
        if ((err as { code?: unknown }).code === '57014') throw new AckTimeout();
        // Another statement stored one of the keys meanwhile (nothing of this one was): sent
        // again, that batch is found as stored and answered as a duplicate.
        if (attempt < KEY_RACE_ATTEMPTS && isKeyRace(err) && performance.now() < deadline) continue;
        throw err;
      }
    }
    for (const m of done.markers) if (m.applied) snapshots.advance(m.execution_id, m.from_event_id, m.to_event_id);
    if (done.outcomes.some((o) => o.kind === 'accepted')) this.#deps.batchWake.wake();
    const out = new Map<number, AcceptOutcome | 'missing'>(inputs.map((i) => [i.pos, 'missing']));
    for (const o of done.outcomes) out.set(o.pos, o);
    return out;
  }

  #refusal(err: unknown): Error {
    if (err instanceof AckTimeout) {
      this.#deps.metrics.batchAckTimeout.inc();
      const s = this.#deps.config.SVC_BATCH_ACCEPT_ENQUEUE_TIMEOUT_SECONDS;
      return new ServiceError('ack_timeout', { code: 'ack_timeout', message: `the batch could not be stored and enqueued within ${s} s (SVC_BATCH_ACCEPT_ENQUEUE_TIMEOUT_SECONDS); nothing was stored, retry` });
    }
    if (isDatabaseUnavailable(err)) {
      return new ServiceError('enqueue_error', { code: 'enqueue_error', message: 'the database is unavailable; nothing was stored, retry' });
    }
    this.#deps.log.error({ err: err instanceof Error ? err.message : String(err) }, 'batch accept failed');
    return new ServiceError('enqueue_error', { code: 'enqueue_error', message: 'the batch could not be stored; nothing was stored, retry' });
  }
}

/** Accept statements sent for one group when other statements keep storing its keys first. */
const KEY_RACE_ATTEMPTS = 3;

function isKeyRace(err: unknown): boolean {
  const e = err as { code?: unknown; constraint?: unknown };
  return e.code === '23505' && e.constraint === BATCH_KEY_CONSTRAINT;
}

/** The transaction missed its deadline: it rolls back (or was never begun). */
class AckTimeout extends Error {}

function answer(b: AcceptedBatch, duplicate: boolean): BatchAccepted {
  return {
    status: 'accepted',
    request_id: b.request_id,
    event_ids: b.event_ids,
    commands_generated: 0,
    queue_depth: b.queue_depth,
    duplicate,
    idempotency_key: b.idempotency_key,
  };
}
