import pg from 'pg';

/** First wait before connecting again after the LISTEN connection is lost; it doubles per failed try. */
export const LISTEN_RETRY_MIN_MS = 100;
/** Longest wait between two tries to connect again. */
export const LISTEN_RETRY_MAX_MS = 5_000;
/**
 * How often the LISTEN connection must answer a `SELECT 1`, in ms. A connection whose database
 * hangs, or whose network path drops everything, stays open without an error: deaf, it passed for
 * listening (the health route's `bus: ok`) for as long as that lasted.
 */
export const LISTEN_CHECK_INTERVAL_MS = 10_000;
/** How long that answer may take, in ms, before the connection counts as lost and is made again. */
export const LISTEN_CHECK_TIMEOUT_MS = 5_000;

export type ListenCheck = { intervalMs: number; timeoutMs: number };

export type ListenEvents = {
  notification(channel: string, payload: string): void;
  /** The connection broke (a database restart, a network fault): notifications are not heard until `resumed`. */
  lost(err: unknown): void;
  /** Listening again after a loss. Notifications sent meanwhile are gone: whoever relies on them must look again. */
  resumed(): void;
};

/** Wait before the `attempt`-th try (0-based): doubling from the minimum to the maximum, each jittered down by up to half. */
export function listenRetryDelayMs(attempt: number, random: () => number = Math.random): number {
  const ceiling = Math.min(LISTEN_RETRY_MAX_MS, LISTEN_RETRY_MIN_MS * 2 ** Math.min(attempt, 16));
  // Servers that lost the same database do not all come back in the same millisecond.
  return Math.round(ceiling / 2 + (random() * ceiling) / 2);
}

/**
 * One connection that LISTENs on a set of channels and does not stay lost: after any error or
 * end it connects again with backoff (listenRetryDelayMs) until `close()`, LISTENs on every
 * channel again, then tells `events.resumed`.
 */
export class ListenConnection {
  readonly #config: pg.ClientConfig;
  readonly #events: ListenEvents;
  readonly #channels = new Set<string>();
  #client: pg.Client | undefined;
  #retry: NodeJS.Timeout | undefined;
  #attempt = 0;
  #closed = false;
  #adding: Promise<void> = Promise.resolve();
  readonly #check: ListenCheck;
  readonly #gone = new WeakSet<pg.Client>(); // connections lost, whose checks stop

  /** `check`: how often the connection must answer, and how soon (LISTEN_CHECK_INTERVAL_MS, LISTEN_CHECK_TIMEOUT_MS unless given). */
  constructor(config: pg.ClientConfig, events: ListenEvents, check: ListenCheck = { intervalMs: LISTEN_CHECK_INTERVAL_MS, timeoutMs: LISTEN_CHECK_TIMEOUT_MS }) {
    this.#config = config;
    this.#events = events;
    this.#check = check;
  }

  /** True while a connection is up and listening (false before the first `add`, and from a loss until the next connection). */
  get connected(): boolean {
    return this.#client !== undefined;
  }

  /**
   * LISTENs on `channel` (a plain identifier, checked by the caller). The first call connects,
   * and throws while the database is away; later ones join the connection, or the next one.
   */
  add(channel: string): Promise<void> {
    // One at a time: two first calls must not open two connections.
    const added = this.#adding.then(() => this.#add(channel));
    this.#adding = added.catch(() => {});
    return added;
  }

  async #add(channel: string): Promise<void> {
    if (this.#channels.has(channel)) return;
    if (!this.#client && !this.#retry) this.#client = await this.#connect();
    this.#channels.add(channel);
    // While reconnecting there is no client: the next connection LISTENs on every channel of the set.
    await this.#client?.query(`LISTEN ${channel}`);
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#retry);
    this.#retry = undefined;
    const client = this.#client;
    this.#client = undefined;
    if (!client) return;
    // Not past the check's bound: a database that hangs never answers the goodbye, and held a
    // server's stop for ever.
    const waited = new Promise<void>((resolve) => setTimeout(resolve, this.#check.timeoutMs).unref());
    await Promise.race([client.end().catch(() => {}), waited]);
  }

  async #connect(): Promise<pg.Client> {
    const client = new pg.Client(this.#config);
    // Every error of this connection, now or later, ends up in #lost: never unhandled.
    client.on('error', (err) => this.#lost(client, err));
    client.on('end', () => this.#lost(client, new Error('the LISTEN connection ended')));
    client.on('notification', (msg) => this.#events.notification(msg.channel, msg.payload ?? ''));
    try {
      await client.connect();
      for (const channel of this.#channels) await client.query(`LISTEN ${channel}`);
    } catch (err) {
      client.removeAllListeners('end');
      await client.end().catch(() => {});
      throw err;
    }
    this.#watch(client);
    return client;
  }

  // Asks `client` for an answer every check interval until it ends: one not answered in time is
  // lost (#lost ends it; a failed query's error reaches #lost through 'error' or 'end').
  #watch(client: pg.Client): void {
    let late: NodeJS.Timeout | undefined;
    const stop = () => {
      clearInterval(timer);
      clearTimeout(late);
    };
    const timer = setInterval(() => {
      // Lost (whose end a frozen path may never deliver), or the whole connection closed.
      if (this.#closed || this.#gone.has(client)) return stop();
      late = setTimeout(() => this.#lost(client, new Error(`the LISTEN connection did not answer within ${this.#check.timeoutMs} ms`)), this.#check.timeoutMs);
      late.unref();
      client.query('SELECT 1').then(
        () => clearTimeout(late),
        () => clearTimeout(late),
      );
    }, this.#check.intervalMs);
    client.once('end', stop);
    // A process that is otherwise done does not stay alive for this.
    timer.unref();
  }

  #lost(client: pg.Client, err: unknown): void {
    if (client !== this.#client) return; // an older connection, or one still connecting
    this.#gone.add(client);
    this.#client = undefined;
    void client.end().catch(() => {});
    if (this.#closed) return;
    this.#events.lost(err);
    this.#scheduleReconnect();
  }

  #scheduleReconnect(): void {
    this.#retry = setTimeout(async () => {
      let client: pg.Client;
      try {
        client = await this.#connect();
      } catch {
        this.#attempt++;
        if (!this.#closed) this.#scheduleReconnect();
        return;
      }
      this.#retry = undefined;
      if (this.#closed) {
        await client.end().catch(() => {});
        return;
      }
      this.#attempt = 0;
      this.#client = client;
      this.#events.resumed();
    }, listenRetryDelayMs(this.#attempt));
    // A process that is otherwise done does not stay alive for this.
    this.#retry.unref();
  }
}
