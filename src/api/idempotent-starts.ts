import { createHash } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { StartKey } from '../../actors/start-execution.ts';
import type { AppDeps } from '../app-deps.ts';
import { findIdempotencyKey, isIdempotencyKeyTaken, type IdempotencyKeyRow } from '../db/idempotency.repo.ts';
import { ServiceError } from '../errors.ts';
import { isObject } from '../objects.ts';

export const IDEMPOTENCY_KEY_HEADER = 'Idempotency-Key';
/** Set on an answer that repeats the first answer to its key. */
export const IDEMPOTENT_REPLAYED_HEADER = 'Idempotent-Replayed';
const KEY_PATTERN = /^[\x20-\x7e]{1,255}$/;
// Starts answer 200; stored with each key so that a replay answers as the first did.
const START_STATUS_CODE = 200;

/** What a start with a key passes to its writer: the key, without the answer the route makes. */
export type KeyClaim = Omit<StartKey, 'answer'>;
type Answer = { statusCode: number; body: unknown; replayed: boolean };

/**
 * The request's key: undefined without the header; a 422 naming it when not 1 to 255 printable
 * ASCII characters, or when sent more than once. `distinct` is the request's headers line by line
 * (`req.raw.headersDistinct`): Node joins repeated lines with ", ", so keys `a` and `b` would be
 * read as the one key `a, b`, which the client never sent.
 */
export function idempotencyKeyOf(headers: FastifyRequest['headers'], distinct?: Record<string, string[] | undefined>): string | undefined {
  const value = headers['idempotency-key'];
  if (value === undefined) return undefined;
  const lines = distinct?.['idempotency-key']?.length ?? 1;
  if (lines > 1) throw invalidKey(`sent ${lines} times: send one key`);
  if (typeof value === 'string' && KEY_PATTERN.test(value)) return value;
  throw invalidKey('must be one value of 1 to 255 printable ASCII characters');
}

const invalidKey = (problem: string): ServiceError =>
  new ServiceError('unprocessable', { message: `invalid ${IDEMPOTENCY_KEY_HEADER} header`, errors: [`${IDEMPOTENCY_KEY_HEADER}: ${problem}`] });

/** sha256 of a body as canonical JSON (object keys sorted): the same request hashes alike in any key order. */
export function requestHash(body: unknown): string {
  const sorted = (_key: string, value: unknown) =>
    isObject(value) ? Object.fromEntries(Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) : value;
  return createHash('sha256').update(JSON.stringify(body ?? null, sorted)).digest('hex');
}

/**
 * The namespace of a key: its target and its caller (as the auth hook established it), so that a
 * key covers one request to one target (the same key to another execution, or another signal of
 * it, is another request), and one caller's key never answers, or blocks, another caller's
 * request. The target is the route with its path parameters as validated (`077` is `77`); a route
 * without them (a start, a batch) is its route alone, as stored before.
 */
export function keyScope(req: FastifyRequest): string {
  const caller = req.identity ? `${req.identity.via}:${req.identity.sub}` : '-';
  return `${req.method} ${targetOf(req)} ${caller}`;
}

/** The route's pattern with each `:param` replaced by the request's value of it (URI-encoded, so no value reads as a separator). */
function targetOf(req: FastifyRequest): string {
  const params = (isObject(req.params) ? req.params : {}) as Record<string, unknown>;
  return (req.routeOptions.url ?? req.url).replace(/:(\w+)/g, (param, name: string) => (params[name] === undefined ? param : encodeURIComponent(String(params[name]))));
}

const reused = () =>
  new ServiceError('unprocessable', {
    code: 'idempotency_key_reused',
    message: `${IDEMPOTENCY_KEY_HEADER} was first used with a different request body; a new request needs a new key`,
    errors: [`${IDEMPOTENCY_KEY_HEADER}: already used with a different request body`],
  });

/**
 * Starts with an `Idempotency-Key`. The key is written by the statement that writes the start
 * (its primary key refuses a second one), so an execution never exists without its key, nor a
 * key without its execution, whatever crashes when. A key seen before answers with its stored
 * first answer; requests with one key on this server wait for the first of them; on two servers
 * the second write fails on the key and then answers with the first's. Failed starts store
 * nothing: nothing was started, so trying again is safe. Keys expire after
 * IDEMPOTENCY_KEY_TTL_MS (src/periodic/idempotency-key-expiry.ts).
 */
export class IdempotentStarts {
  readonly #deps: AppDeps;
  readonly #statusCode: number;
  readonly #inFlight = new Map<string, { hash: string; answer: Promise<Answer> }>();

  /** `statusCode`: what the route answers a first request with (stored with its key); starts answer 200, signals 202. */
  constructor(deps: AppDeps, statusCode = START_STATUS_CODE) {
    this.#deps = deps;
    this.#statusCode = statusCode;
  }

  /**
   * Answers a start request: without a key, with what `start()` returns; with a key, with the
   * first answer to it (stored, or of a request in flight), or `start(claim)`'s, stored with it.
   * `request`: what is compared for "the same body" (default the body as sent; a route whose
   * bodies mean the same in several spellings passes the one it reads).
   */
  async answer(req: FastifyRequest, reply: FastifyReply, start: (claim?: KeyClaim) => Promise<unknown>, request: unknown = req.body): Promise<unknown> {
    const key = idempotencyKeyOf(req.headers, req.raw.headersDistinct);
    if (key === undefined) return start();
    const claim: KeyClaim = { scope: keyScope(req), key, requestHash: requestHash(request), statusCode: this.#statusCode };
    const id = `${claim.scope}\n${key}`;
    let answer: Answer;
    for (;;) {
      const first = this.#inFlight.get(id);
      if (!first) {
        const attempt: Promise<Answer> = this.#attempt(claim, start).finally(() => {
          if (this.#inFlight.get(id)?.answer === attempt) this.#inFlight.delete(id);
        });
        this.#inFlight.set(id, { hash: claim.requestHash, answer: attempt });
        answer = await attempt;
        break;
      }
      const settled = await first.answer.catch(() => undefined);
      if (!settled) continue; // it failed and stored nothing: this one tries for itself
      if (first.hash !== claim.requestHash) throw reused();
      answer = { ...settled, replayed: true };
      break;
    }
    reply.code(answer.statusCode);
    if (answer.replayed) reply.header(IDEMPOTENT_REPLAYED_HEADER, 'true');
    return answer.body;
  }

  async #attempt(claim: KeyClaim, start: (claim: KeyClaim) => Promise<unknown>): Promise<Answer> {
    const stored = await findIdempotencyKey(this.#deps.db, claim.scope, claim.key);
    if (stored) return replay(stored, claim);
    try {
      return { statusCode: claim.statusCode, body: await start(claim), replayed: false };
    } catch (err) {
      // Another server's request with this key was written since the look above: its answer is
      // this one's too, whatever this one met: the key's row refusing it, or, for a signal, the
      // wait that request ended (409 not_waiting, though the signal was delivered once), or the
      // last place in the execution's buffer that request took (409 signal_buffer_full).
      if (!isIdempotencyKeyTaken(err) && !(err instanceof ServiceError && (err.code === 'not_waiting' || err.code === 'signal_buffer_full'))) throw err;
      const row = await findIdempotencyKey(this.#deps.db, claim.scope, claim.key);
      if (!row) throw err;
      return replay(row, claim);
    }
  }
}

function replay(row: IdempotencyKeyRow, claim: KeyClaim): Answer {
  if (row.request_hash !== claim.requestHash) throw reused();
  return { statusCode: row.status_code, body: row.response, replayed: true };
}
