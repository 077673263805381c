import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** Batches whose first claim this process remembers having observed, at most (the oldest go first). */
export const FIRST_CLAIM_MAX_BATCHES = 10_000;
/**
 * Longest a scrape waits for svc_batch_queue_depth's read, in ms; then it shows the last depth
 * read. A database that hangs held every scrape 5 s (the pool's answer bound), and a scrape that
 * fails Prometheus's timeout hides the outage it should show.
 */
export const QUEUE_DEPTH_READ_MAX_MS = 1_000;

/** What a claim site hands over of each command it claimed (a CommandRow as the claim returned it). */
export type ClaimedCommand = { attempt: number; created_at: Date; claimed_at: Date | null; issued_by_batch?: number | string | null };

/**
 * svc_batch_first_worker_claim_latency_seconds: each command a batch item issues names its batch
 * in the row the issuing write inserts, whichever routing wrote the item (actors/fold.ts); every
 * claim site hands over what it claimed (`claimed`), and a command's first claim (attempt 1) that
 * is the first of its batch's seen here observes the time from its issue to the claim, both on
 * the database's clock.
 */
export class FirstClaimLatency {
  readonly #histogram: Histogram;
  readonly #observed = new Set<string>();

  constructor(histogram: Histogram) {
    this.#histogram = histogram;
  }

  claimed(commands: readonly ClaimedCommand[]): void {
    for (const c of commands) {
      if (c.issued_by_batch === null || c.issued_by_batch === undefined || c.attempt !== 1 || !c.claimed_at) continue;
      const batch = String(c.issued_by_batch);
      if (this.#observed.has(batch)) continue; // only the first claim of a batch's commands counts
      this.#observed.add(batch);
      if (this.#observed.size > FIRST_CLAIM_MAX_BATCHES) this.#observed.delete(this.#observed.values().next().value!);
      this.#histogram.observe(Math.max(0, c.claimed_at.getTime() - c.created_at.getTime()) / 1000);
    }
  }
}

/** One registry per app instance, so tests can build several apps in one process. */
export function createMetrics() {
  const registry = new Registry();
  // Set by the batch intake: svc_batch_queue_depth is read from the database when scraped.
  const depth: { read?: () => Promise<number> } = {};
  collectDefaultMetrics({ register: registry });
  const m = {
    registry,
    // The batch intake metrics the spec names, registered from the start.
    batchEnqueueLatency: new Histogram({
      name: 'svc_batch_enqueue_latency_seconds',
      help: "Time from an accepted event batch's arrival to its being persisted and enqueued (waiting behind other accepts of its execution included)",
      buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1],
      registers: [registry],
    }),
    batchAckTimeout: new Counter({
      name: 'svc_batch_ack_timeout_total',
      help: 'Batches refused because enqueueing exceeded SVC_BATCH_ACCEPT_ENQUEUE_TIMEOUT_SECONDS',
      registers: [registry],
    }),
    batchQueueDepth: new Gauge({
      name: 'svc_batch_queue_depth',
      help: 'Batches accepted and not yet processed (all servers), read when scraped',
      registers: [registry],
      async collect() {
        if (!depth.read) return;
        let timer: NodeJS.Timeout | undefined;
        const late = new Promise<undefined>((ok) => (timer = setTimeout(() => ok(undefined), QUEUE_DEPTH_READ_MAX_MS)));
        try {
          const n = await Promise.race([depth.read(), late]);
          if (n !== undefined) this.set(n);
        } catch {
          // The database is away: the scrape shows the last depth read.
        } finally {
          clearTimeout(timer);
        }
      },
    }),
    batchFirstClaims: new FirstClaimLatency(
      new Histogram({
        name: 'svc_batch_first_worker_claim_latency_seconds',
        help: "From a batch's command.issued to the first claim of a command it issued",
        buckets: [0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10],
        registers: [registry],
      }),
    ),
    // Engine metrics.
    executionsStarted: new Counter({ name: 'svc_executions_started_total', help: 'Executions started', registers: [registry] }),
    executionsFinished: new Counter({
      name: 'svc_executions_finished_total',
      help: 'Executions that reached a terminal state',
      labelNames: ['status'],
      registers: [registry],
    }),
    eventsRouted: new Counter({ name: 'svc_events_routed_total', help: 'Events routed to execution actors', registers: [registry] }),
    commandsIssued: new Counter({ name: 'svc_commands_issued_total', help: 'Commands issued', registers: [registry] }),
    commandsClaimed: new Counter({ name: 'svc_commands_claimed_total', help: 'Commands claimed by workers', registers: [registry] }),
    routeSeconds: new Histogram({
      name: 'svc_route_transaction_seconds',
      help: 'Duration of one routing (hydrate, transition, the one write statement and its commit)',
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.5],
      registers: [registry],
    }),
    routedFromMemory: new Counter({
      name: 'svc_route_from_memory_total',
      help: 'Routings that read nothing before their one write: the state came from what this server committed last',
      registers: [registry],
    }),
    routeRetries: new Counter({
      name: 'svc_route_retries_total',
      help: 'Units of work routed again: moved (the write found a row moved on since it was read) or lacking (a fold lacked a read)',
      labelNames: ['reason'],
      registers: [registry],
    }),
    busReconnects: new Counter({
      name: 'svc_bus_reconnects_total',
      help: 'Times the LISTEN connection of the command bus came back after it was lost (database restart, network fault)',
      registers: [registry],
    }),
    // Background work (src/periodic/every.ts).
    periodicRuns: new Counter({
      name: 'svc_periodic_runs_total',
      help: 'Runs of periodic work on this server, by job name and outcome (ok, failed, skipped: another server held its lease or ran it within the interval)',
      labelNames: ['name', 'outcome'],
      registers: [registry],
    }),
    periodicRunSeconds: new Histogram({
      name: 'svc_periodic_run_seconds',
      help: 'Duration of one run of periodic work (lease taken included), by job name',
      labelNames: ['name'],
      buckets: [0.001, 0.005, 0.025, 0.1, 0.5, 2.5, 10, 60],
      registers: [registry],
    }),
    // The command reaper (src/periodic/command-reaper.ts).
    reaperSweeps: new Counter({
      name: 'svc_command_reaper_sweeps_total',
      help: 'Reaper sweeps this server ran, by trigger (timer, nudge)',
      labelNames: ['trigger'],
      registers: [registry],
    }),
    reaperScanned: new Counter({ name: 'svc_command_reaper_scanned_total', help: 'Command rows read by reaper sweeps', registers: [registry] }),
    reaperRepublished: new Counter({
      name: 'svc_command_reaper_republished_total',
      help: 'Commands whose notification the reaper republished, by reason (pending_stale, worker_missing, worker_not_ready, worker_stale, orphaned, hard_timeout)',
      labelNames: ['reason'],
      registers: [registry],
    }),
    reaperWithdrawn: new Counter({
      name: 'svc_command_reaper_withdrawn_total',
      help: 'Claims of paused executions whose worker was gone that the reaper gave back to the pause (their resume issues them)',
      registers: [registry],
    }),
    workerSecretDenied: new Counter({
      name: 'svc_worker_secret_denied_total',
      help: 'Secrets refused to the worker token (no held command, or its tasks do not name it), by kind (credential, keychain, secret, service_reader)',
      labelNames: ['kind'],
      registers: [registry],
    }),
    httpRequests: new Counter({
      name: 'svc_http_requests_total',
      help: 'HTTP requests by route and status code',
      labelNames: ['method', 'route', 'status_code'],
      registers: [registry],
    }),
    triggerFires: new Counter({
      name: 'svc_trigger_fires_total',
      help: 'Trigger fires by kind and outcome (started, skipped, refused, duplicate: a fire key seen before)',
      labelNames: ['kind', 'outcome'],
      registers: [registry],
    }),
    triggerFireLateness: new Histogram({
      name: 'svc_trigger_fire_lateness_seconds',
      help: 'From a schedule fire\'s scheduled time to the commit of its start',
      buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 60, 600],
      registers: [registry],
    }),
    waitsFired: new Counter({
      name: 'svc_waits_fired_total',
      help: 'Waits the timekeeper ended: timers fired (kind timer) and signal waits timed out (kind signal)',
      labelNames: ['kind'],
      registers: [registry],
    }),
    waitFireLateness: new Histogram({
      name: 'svc_wait_fire_lateness_seconds',
      help: 'From a wait\'s wake-up time to the commit of its timer.fired or wait.timed_out',
      buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 60],
      registers: [registry],
    }),
    // Flow control, per limit name (never per key: keys are tenants, unbounded); `kind`: execution (a
    // playbook's concurrency or debounce; limit '' for debounce alone) or command (a task's limit).
    flowQueued: new Counter({
      name: 'svc_flow_queued_total',
      help: 'Executions queued for admission and limited commands issued (they wait for room on their key)',
      labelNames: ['limit', 'kind'],
      registers: [registry],
    }),
    flowAdmissions: new Counter({
      name: 'svc_flow_admissions_total',
      help: 'Executions admitted and limited commands claimed',
      labelNames: ['limit', 'kind'],
      registers: [registry],
    }),
    flowWaitSeconds: new Histogram({
      name: 'svc_flow_wait_seconds',
      help: 'From queued (or issued) to admitted (or claimed), for executions and commands of a limit',
      labelNames: ['limit', 'kind'],
      buckets: [0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300, 1800],
      registers: [registry],
    }),
    signalsReceived: new Counter({
      name: 'svc_signals_received_total',
      help: 'Signals sent to executions, by outcome (delivered, buffered, not_waiting, forbidden, buffer_full)',
      labelNames: ['outcome'],
      registers: [registry],
    }),
    triggerRefused: new Counter({
      name: 'svc_trigger_requests_refused_total',
      help: 'Webhook deliveries refused before anything started, by reason (signature, timestamp, unknown_trigger, too_large, paused, delivery_id, body, request)',
      labelNames: ['reason'],
      registers: [registry],
    }),
    /** Where svc_batch_queue_depth reads the depth from when scraped. */
    readBatchQueueDepth(read: () => Promise<number>): void {
      depth.read = read;
    },
  };
  return m;
}

export type Metrics = ReturnType<typeof createMetrics>;
