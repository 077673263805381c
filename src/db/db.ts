import { AsyncLocalStorage } from 'node:async_hooks';
import pg from 'pg';
import { classifyDatabaseError, isDatabaseUnavailable } from './classify-database-error.ts';
import { ListenConnection, type ListenCheck, type ListenEvents } from './listen-connection.ts';
import type { Queryable } from './queryable.ts';

// Bigints come back as strings by default; ids here stay far below 2^53, so numbers are safe
// and keep JSON responses as integers (the spec returns execution_id as an integer).
pg.types.setTypeParser(pg.types.builtins.INT8, (v) => Number(v));
pg.types.setTypeParser(pg.types.builtins.NUMERIC, (v) => Number(v));

export type Listener = (payload: string) => void;
/** What a subscriber hears about the LISTEN connection besides notifications. */
export type ListenStatus = Pick<ListenEvents, 'lost' | 'resumed'>;

/** Where a transaction's time went (milliseconds): connection checkout, the work up to COMMIT, the COMMIT. */
export type TxTiming = { checkoutMs: number; bodyMs: number; commitMs: number };

/**
 * Longest wait for a connection: the TCP connect and startup handshake of a new one, or a free
 * one of a full pool. Past it the query fails instead of hanging on a database that never answers.
 */
export const DB_CONNECT_TIMEOUT_MS = 5_000;
/**
 * Longest a statement waits for its answer (pg's client-side `query_timeout`). A database that
 * hangs (SIGSTOPped, or a network that drops its packets) keeps the connections already open, and
 * a statement sent on one waited for ever: a request hung, a worker's claim or report too. Past
 * it the statement fails as `database_unavailable` (503 with Retry-After) and its connection is
 * discarded. The service's statements reach rows by key and take milliseconds; the bound leaves
 * a slow database (a lock wait, a loaded disk) room to answer. Long work is not bounded (longWork).
 */
export const DB_ANSWER_TIMEOUT_MS = 10_000;
/** How much longer than a bounded() pool's statement_timeout its statements wait for an answer, in ms. */
const BOUNDED_ANSWER_GRACE_MS = 1_000;
/** What a health ping found (Db.ping). */
export type DatabaseReach = 'ok' | 'read_only' | 'unreachable';

/** Longest a health ping may take, waiting for a connection included; then the database counts as down. */
export const PING_TIMEOUT_MS = 2_000;
/**
 * How long a pool's connection may sit idle before it is closed. A new one pays its login and,
 * per prepared statement, the five custom plans PostgreSQL makes first (1-3 ms each for the
 * writes): with 30 s, a burst of 8 starts after a 35 s lull completed in 72-100 ms against ~30
 * warm (`node bench/run.ts --only lull`), as every per-minute schedule's fire would have paid.
 * Under the idle timeouts of common load balancers and NATs (Azure's 4 min), which drop a
 * connection without a word.
 */
const POOL_IDLE_TIMEOUT_MS = 180_000;
/**
 * A connection idle this long gets a TCP keepalive probe, so middleboxes see it in use and keep
 * its state (and a peer that vanished is found by the probes, not by the next statement).
 */
const POOL_KEEPALIVE_DELAY_MS = 60_000;

/**
 * Longest a service session may sit idle inside a transaction before PostgreSQL ends it
 * (`idle_in_transaction_session_timeout`). The service sends a transaction's statements one after
 * another with nothing to wait for between them; a server stopped mid-transaction (SIGSTOP, a
 * suspended VM) held its row and advisory locks for as long as it stood still, and every other
 * server's work on those executions waited behind it. Past this the session ends and its work
 * rolls back; the stopped server, once it runs again, finds its connection gone (503, a retry).
 */
export const DB_IDLE_IN_TRANSACTION_MS = 30_000;

// No JIT: the service's statements are short and run thousands of times; before PostgreSQL 18 a
// seq scan that enable_seqscan=off cannot avoid costs 1e10, over every jit_*_above_cost, and the
// admitter's look (a scan of flow_limit, two of admission) compiled for ~0.7 s at every run.
const sessionOptions = (idleInTransactionMs: number): string => `-c enable_seqscan=off -c jit=off -c idle_in_transaction_session_timeout=${idleInTransactionMs}`;
/** Added where the bus is NATS: the statements that would NOTIFY claimers leave it to the engine (migrations/0024). */
const NOTIFY_OFF = ' -c svc.notify=off';

/**
 * Set while long work runs (withClient: migrations, the event log's partition runs, which hold
 * their session lock on a connection of their own and archive or drop whole ranges): its
 * statements, and those of the work it runs through this Db meanwhile, have no answer bound.
 */
const longWork = new AsyncLocalStorage<true>();

/** A statement with pg's client-side answer bound (milliseconds), which its types leave out. */
type BoundedConfig = pg.QueryConfig & { query_timeout?: number };

/**
 * `text` with its answer bounded by DB_ANSWER_TIMEOUT_MS, outside long work. A statement whose
 * answer never came may still commit once the database answers again: a start is repeated safely
 * with its Idempotency-Key, a report is fenced by its claim (docs/operations.md).
 */
function answerBound(text: string | BoundedConfig, params: unknown[] | undefined): BoundedConfig {
  const config: BoundedConfig = typeof text === 'string' ? { text } : text;
  const values = params ?? config.values;
  // A bound of the statement's own (the gateway's shorter one) stands.
  const bound = longWork.getStore() ? config.query_timeout : (config.query_timeout ?? DB_ANSWER_TIMEOUT_MS);
  return { ...config, ...(values === undefined ? {} : { values }), ...(bound === undefined ? {} : { query_timeout: bound }) };
}

/** `client` whose statements are bounded as answerBound says. */
function boundClient(client: pg.PoolClient): Queryable {
  return { query: <R extends pg.QueryResultRow>(text: string | pg.QueryConfig, params?: unknown[]) => client.query<R>(answerBound(text, params)) };
}

// An 'error' event without a listener would end the process; the failure reaches whoever uses
// the connection next (its query fails, the pool discards it).
const ignoreError = (): void => {};

/**
 * A pool whose connections start with `options` (in the startup packet: no statement per call)
 * and whose errors never crash the process: an idle client that errors (server restart) is
 * dropped, and a checked-out one (57P01 at a shutdown, a dropped socket) fails its own queries
 * and is discarded at release.
 */
function newPool(url: string, max: number, options: string): pg.Pool {
  const pool = new pg.Pool({
    connectionString: url,
    max,
    idleTimeoutMillis: POOL_IDLE_TIMEOUT_MS,
    keepAlive: true,
    keepAliveInitialDelayMillis: POOL_KEEPALIVE_DELAY_MS,
    connectionTimeoutMillis: DB_CONNECT_TIMEOUT_MS,
    options,
  });
  pool.on('error', ignoreError);
  pool.on('connect', (client) => client.on('error', ignoreError));
  return pool;
}

/** One statement on `pool`; rejects with `database_unavailable` (errors.ts) while the database is away. */
function poolQuery<R extends pg.QueryResultRow>(pool: pg.Pool, text: string | BoundedConfig, params?: unknown[]): Promise<pg.QueryResult<R>> {
  // pg-pool discards a connection whose statement failed (its answer may still come).
  return pool.query<R>(answerBound(text, params)).catch((err: unknown) => {
    throw classifyDatabaseError(err);
  });
}

/** The only holder of a pg.Pool: queries, transactions and LISTEN. */
export class Db implements Queryable {
  readonly pool: pg.Pool;
  readonly url: string;
  readonly #listening: ListenConnection;
  #listeners = new Map<string, Set<Listener>>();
  #statusListeners = new Set<ListenStatus>();
  #bounded = new Map<number, pg.Pool>();
  readonly #sessionOptions: string;
  #closed = false;

  /**
   * `notify` false: this server's bus is not PostgreSQL, so its statements send no NOTIFY to claimers.
   * `idleInTransactionMs`: DB_IDLE_IN_TRANSACTION_MS unless given (a test's shorter one).
   * `listenCheck`: how often the LISTEN connection must answer (LISTEN_CHECK_INTERVAL_MS unless given).
   */
  constructor(url: string, max = 10, opts: { notify?: boolean; idleInTransactionMs?: number; listenCheck?: ListenCheck } = {}) {
    this.url = url;
    this.#sessionOptions = sessionOptions(opts.idleInTransactionMs ?? DB_IDLE_IN_TRANSACTION_MS);
    // Every statement the service sends reaches rows by key, and its prepared statements keep
    // one generic plan per connection: planned while a table is small, that plan would scan the
    // table whole for the connection's life as it grows (the engine's writes did). Set in the
    // startup packet, so it costs no statement and is in force before the first query.
    this.pool = newPool(url, max, this.#sessionOptions + (opts.notify === false ? NOTIFY_OFF : ''));
    this.#listening = new ListenConnection(
      { connectionString: url, connectionTimeoutMillis: DB_CONNECT_TIMEOUT_MS, keepAlive: true },
      {
        notification: (channel, payload) => {
          for (const l of this.#listeners.get(channel) ?? []) l(payload);
        },
        lost: (err) => {
          for (const s of this.#statusListeners) s.lost(err);
        },
        resumed: () => {
          for (const s of this.#statusListeners) s.resumed();
        },
      },
      opts.listenCheck,
    );
  }

  /** One statement on a pooled connection. Rejects with `database_unavailable` (errors.ts) while the database is away. */
  query<R extends pg.QueryResultRow = pg.QueryResultRow>(text: string | pg.QueryConfig, params?: unknown[]): Promise<pg.QueryResult<R>> {
    return poolQuery<R>(this.pool, text, params);
  }

  // A checked-out client, or `database_unavailable` when none can be had.
  async #connect(): Promise<pg.PoolClient> {
    try {
      return await this.pool.connect();
    } catch (err) {
      throw classifyDatabaseError(err);
    }
  }

  /**
   * Runs fn inside BEGIN/COMMIT on one client; rolls back and rethrows on error (`database_unavailable`
   * when the database went away). `timing`, when given, receives how long the connection checkout,
   * the work up to COMMIT, and the COMMIT took.
   */
  async tx<T>(fn: (client: Queryable) => Promise<T>, timing?: TxTiming): Promise<T> {
    const t0 = performance.now();
    const client = await this.#connect();
    const t1 = performance.now();
    const q = boundClient(client);
    try {
      await q.query('BEGIN');
      const out = await fn(q);
      const t2 = performance.now();
      await q.query('COMMIT');
      if (timing) Object.assign(timing, { checkoutMs: t1 - t0, bodyMs: t2 - t1, commitMs: performance.now() - t2 });
      client.release();
      return out;
    } catch (err) {
      const classified = classifyDatabaseError(err);
      // A connection that did not answer is closed, which ends its transaction on the server: a
      // ROLLBACK would only wait behind the unanswered statement, and the connection must not be
      // handed out again. COMMIT sent and unanswered may have committed (answerBound).
      if (isDatabaseUnavailable(classified)) client.release(err instanceof Error ? err : new Error(String(err)));
      else {
        await q.query('ROLLBACK').catch(() => {});
        client.release();
      }
      throw classified;
    }
  }

  /**
   * Runs fn on one dedicated client (session-level advisory locks need one connection) as long
   * work: migrations and partition runs, whose statements (and those of the work fn runs through
   * this Db meanwhile) may legitimately take long, so none is bounded by DB_ANSWER_TIMEOUT_MS.
   */
  async withClient<T>(fn: (client: Queryable) => Promise<T>): Promise<T> {
    return longWork.run(true, async () => {
      const client = await this.#connect();
      let failed: unknown;
      try {
        return await fn(client);
      } catch (err) {
        failed = err;
        throw classifyDatabaseError(err);
      } finally {
        // Broken or left mid-statement: discarded, not handed out again.
        client.release(isDatabaseUnavailable(failed) ? new Error('connection lost in long work') : undefined);
      }
    });
  }

  /**
   * Subscribes to a NOTIFY channel over one shared connection, which reconnects by itself after a
   * database restart (listen-connection.ts); `status` hears of the loss and of the return, after
   * which notifications sent meanwhile must be made up for. Returns an unsubscribe function.
   */
  async listen(channel: string, fn: Listener, status?: ListenStatus): Promise<() => void> {
    if (!/^[a-z_][a-z0-9_]*$/.test(channel)) throw new Error(`invalid channel name ${channel}`);
    await this.#listening.add(channel);
    let set = this.#listeners.get(channel);
    if (!set) this.#listeners.set(channel, (set = new Set()));
    set.add(fn);
    if (status) this.#statusListeners.add(status);
    return () => {
      set.delete(fn);
      if (status) this.#statusListeners.delete(status);
    };
  }

  /** True while the LISTEN connection is up (false before the first `listen`, and from a loss until it is back). */
  get listening(): boolean {
    return this.#listening.connected;
  }

  /** NOTIFYs `channel` with `payload` (heard by every `listen` on it, in any process). */
  async notify(channel: string, payload: string): Promise<void> {
    await this.query('SELECT pg_notify($1, $2)', [channel, payload]);
  }

  /** True once close() has begun: work started before it (a warm-up) stops quietly. */
  get closed(): boolean {
    return this.#closed;
  }

  /**
   * Statements on connections of their own (at most `max`) that PostgreSQL cancels past
   * `timeoutMs` (the session's statement_timeout, set at connect: no statement per call), each
   * prepared statement planned once (a generic plan at once: the batch accept's plan costs tens
   * of milliseconds, which the five custom plans PostgreSQL makes first would pay each time). A
   * statement sent alone commits with it (autocommit), so it is committed whole within the bound
   * or not at all; the cancel never comes between its work and its commit. Closed with the Db.
   */
  bounded(timeoutMs: number, max: number): Queryable {
    const pool = this.#boundedPool(timeoutMs, max);
    // PostgreSQL's bound comes first; the answer's (a database that hangs) never cuts it short.
    const answerMs = Math.max(DB_ANSWER_TIMEOUT_MS, Math.ceil(timeoutMs) + BOUNDED_ANSWER_GRACE_MS);
    return {
      query: <R extends pg.QueryResultRow = pg.QueryResultRow>(text: string | pg.QueryConfig, params?: unknown[]) =>
        poolQuery<R>(pool, { ...(typeof text === 'string' ? { text } : text), query_timeout: answerMs } satisfies BoundedConfig, params),
    };
  }

  /**
   * Opens all `max` connections of the `bounded(timeoutMs, max)` pool and runs `prepare` on each
   * with no statement timeout, which then applies again: statements prepared there are planned
   * even when planning takes longer than the bound (a loaded machine, a fresh connection).
   */
  async prepareBounded(timeoutMs: number, max: number, prepare: (q: Queryable) => Promise<unknown>): Promise<void> {
    const pool = this.#boundedPool(timeoutMs, max);
    const connected = await Promise.allSettled(Array.from({ length: max }, () => pool.connect()));
    const clients = connected.flatMap((c) => (c.status === 'fulfilled' ? [c.value] : []));
    const done = await Promise.allSettled(
      clients.map(async (client) => {
        try {
          await client.query('SET statement_timeout = 0');
          await prepare(client);
          await client.query('RESET statement_timeout'); // back to the bound the connection started with
          client.release();
        } catch (err) {
          client.release(err instanceof Error ? err : new Error(String(err))); // discarded: its timeout may be off
          throw err;
        }
      }),
    );
    const failed = [...connected, ...done].find((d) => d.status === 'rejected');
    if (failed) throw classifyDatabaseError(failed.reason);
  }

  #boundedPool(timeoutMs: number, max: number): pg.Pool {
    // A pool made after close() would hold connections nobody ends (a warm-up still under way).
    if (this.#closed) throw new Error('the database client is closed');
    const ms = Math.max(1, Math.ceil(timeoutMs));
    let pool = this.#bounded.get(ms);
    if (!pool) {
      pool = newPool(this.url, max, `${this.#sessionOptions} -c statement_timeout=${ms} -c plan_cache_mode=force_generic_plan`);
      this.#bounded.set(ms, pool);
    }
    return pool;
  }

  /**
   * How the database answers within `timeoutMs`: `ok`, `read_only` (it takes no writes: a standby
   * after a failover, or default_transaction_read_only set), or `unreachable`; never throws, never hangs.
   */
  async ping(timeoutMs = PING_TIMEOUT_MS): Promise<DatabaseReach> {
    let timedOut = false;
    let inUse: pg.PoolClient | undefined;
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<DatabaseReach>((resolve) => {
      timer = setTimeout(() => {
        timedOut = true;
        // A connection whose query never came back is discarded, not handed out again.
        inUse?.release(new Error(`ping took over ${timeoutMs} ms`));
        resolve('unreachable');
      }, timeoutMs);
    });
    const attempt = (async (): Promise<DatabaseReach> => {
      const client = await this.pool.connect();
      if (timedOut) {
        client.release();
        return 'unreachable';
      }
      inUse = client;
      try {
        // On in a hot standby as under default_transaction_read_only: either way no write is taken.
        const { rows } = await client.query<{ transaction_read_only: string }>('SHOW transaction_read_only');
        if (!timedOut) client.release();
        return rows[0]?.transaction_read_only === 'on' ? 'read_only' : 'ok';
      } catch {
        if (!timedOut) client.release(true); // broken: discard it
        return 'unreachable';
      }
    })().catch((): DatabaseReach => 'unreachable');
    try {
      return await Promise.race([attempt, deadline]);
    } finally {
      clearTimeout(timer);
    }
  }

  async close(): Promise<void> {
    this.#closed = true;
    await this.#listening.close();
    await Promise.all([this.pool.end(), ...[...this.#bounded.values()].map((p) => p.end())]);
  }
}
