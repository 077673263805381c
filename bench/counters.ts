import pg from 'pg';
import http from 'node:http';
import type { Db } from '../src/db/db.ts';
import { sleep } from './stats.ts';

function metricsText(serverUrl: string): Promise<string> {
  return new Promise((ok, fail) => {
    http
      .get(new URL('/metrics', serverUrl), (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => ok(text));
        res.on('error', fail);
      })
      .on('error', fail);
  });
}

/**
 * Counters that tell what a scenario cost the database and the HTTP API:
 * - `xid`: transaction ids assigned = transactions that wrote (each needs a WAL flush at commit);
 *   exact and immediate (`pg_current_xact_id()` of our own probe transactions, minus those probes).
 * - `xactCommit`: `pg_stat_database.xact_commit` of the service database = every committed
 *   transaction, read-only ones included. Backends publish these counters lazily (up to 10 s
 *   late when idle), so a snapshot first forces a flush on every connection of the server's pool.
 * - `http`: `svc_http_requests_total` from GET /metrics, by "METHOD route".
 */
export type CounterSnapshot = { xid: number; xactCommit: number; probeCommits: number; http: Map<string, number>; routeSeconds: number; routes: number; routesFromMemory: number };

export type CounterDelta = {
  /** Transactions that wrote (assigned a transaction id). */
  writeCommits: number;
  /** Every committed transaction, read-only ones included. */
  commits: number;
  /** HTTP requests by "METHOD route" (GET /metrics excluded). */
  http: Record<string, number>;
  /** Routing transactions (`svc_route_transaction_seconds` count) and their total time in ms. */
  routes: number;
  routeMs: number;
  /** Of those, routed from memory in one statement (`svc_route_from_memory_total`). */
  routesFromMemory: number;
};

/**
 * Publishes this backend's pending statistics as it goes idle (before ReadyForQuery). The scan of
 * a catalog matters: a backend with no pending table statistics skips the flush altogether and
 * keeps its transaction counts back.
 */
const FLUSH_SQL = 'SELECT pg_stat_force_next_flush() FROM pg_catalog.pg_am LIMIT 1';
const POOL_IDLE_WAIT_MS = 2_000;

export class Counters {
  readonly #client: pg.Client;
  readonly #serverDb: Db;
  readonly #serverUrl: string;

  private constructor(client: pg.Client, serverDb: Db, serverUrl: string) {
    this.#client = client;
    this.#serverDb = serverDb;
    this.#serverUrl = serverUrl;
  }

  static async open(databaseUrl: string, serverDb: Db, serverUrl: string): Promise<Counters> {
    const client = new pg.Client({ connectionString: databaseUrl });
    await client.connect();
    return new Counters(client, serverDb, serverUrl);
  }

  async close(): Promise<void> {
    await this.#client.end();
  }

  /** Makes every idle connection of the server's pool publish its pending statistics now. */
  async #flushServerPool(): Promise<number> {
    const pool = this.#serverDb.pool;
    // Wait until no connection is checked out, then take them all in one tick: a connection
    // busy elsewhere would escape the flush and keep its counts back (up to 10 s).
    const until = performance.now() + POOL_IDLE_WAIT_MS;
    while (pool.idleCount < pool.totalCount && performance.now() < until) await sleep(1);
    const n = pool.totalCount;
    const clients = await Promise.all(Array.from({ length: n }, () => pool.connect()));
    try {
      await Promise.all(clients.map((c) => c.query(FLUSH_SQL)));
    } finally {
      for (const c of clients) c.release();
    }
    return n;
  }

  async snapshot(): Promise<CounterSnapshot> {
    const flushed = await this.#flushServerPool();
    await this.#client.query(FLUSH_SQL);
    const { rows } = await this.#client.query<{ xid: string; xact_commit: string }>(
      `SELECT pg_current_xact_id()::text AS xid,
              (SELECT xact_commit FROM pg_stat_database WHERE datname = current_database())::text AS xact_commit`,
    );
    const metrics = await this.#metrics();
    // Commits that measuring adds between the previous snapshot's reading and this one's: the
    // previous reading statement (counted after it read), one flush per pool connection, ours.
    return { xid: Number(rows[0].xid), xactCommit: Number(rows[0].xact_commit), probeCommits: flushed + 2, ...metrics };
  }

  async #metrics(): Promise<{ http: Map<string, number>; routeSeconds: number; routes: number; routesFromMemory: number }> {
    const text = await metricsText(this.#serverUrl);
    const out = new Map<string, number>();
    let routeSeconds = 0;
    let routes = 0;
    let routesFromMemory = 0;
    for (const line of text.split('\n')) {
      if (line.startsWith('svc_route_from_memory_total ')) routesFromMemory = Number(line.slice(line.lastIndexOf(' ') + 1));
      if (line.startsWith('svc_route_transaction_seconds_sum')) routeSeconds = Number(line.slice(line.lastIndexOf(' ') + 1));
      if (line.startsWith('svc_route_transaction_seconds_count')) routes = Number(line.slice(line.lastIndexOf(' ') + 1));
      if (!line.startsWith('svc_http_requests_total{')) continue;
      const method = /method="([^"]*)"/.exec(line)?.[1] ?? '?';
      const route = /route="([^"]*)"/.exec(line)?.[1] ?? '?';
      if (route === '/metrics') continue;
      const value = Number(line.slice(line.lastIndexOf(' ') + 1));
      const key = `${method} ${route}`;
      out.set(key, (out.get(key) ?? 0) + value);
    }
    return { http: out, routeSeconds, routes, routesFromMemory };
  }

  /** What happened between two snapshots, without the snapshots' own probe transactions. */
  static delta(before: CounterSnapshot, after: CounterSnapshot): CounterDelta {
    const http: Record<string, number> = {};
    for (const [k, v] of after.http) {
      const d = v - (before.http.get(k) ?? 0);
      if (d) http[k] = d;
    }
    // The reading transaction of `after` assigned an xid itself.
    const writeCommits = after.xid - before.xid - 1;
    // `before`'s reading statement and `after`'s flush statements committed in between.
    const commits = after.xactCommit - before.xactCommit - after.probeCommits;
    return {
      writeCommits,
      commits,
      http,
      routes: after.routes - before.routes,
      routeMs: (after.routeSeconds - before.routeSeconds) * 1000,
      routesFromMemory: after.routesFromMemory - before.routesFromMemory,
    };
  }
}

export function sumHttp(http: Record<string, number>, pick: (route: string) => boolean = () => true): number {
  return Object.entries(http).reduce((n, [k, v]) => n + (pick(k) ? v : 0), 0);
}
