import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** One registry per app instance, so tests can build several apps in one process. */
export function createMetrics() {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const m = {
    registry,
    // The batch intake metrics the spec names, registered from the start.
    batchEnqueueLatency: new Histogram({
      name: 'svc_batch_enqueue_latency_seconds',
      help: 'Time to persist and enqueue an accepted event batch',
      buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1],
      registers: [registry],
    }),
    batchAckTimeout: new Counter({
      name: 'svc_batch_ack_timeout_total',
      help: 'Batches refused because enqueueing exceeded SVC_BATCH_ACCEPT_ENQUEUE_TIMEOUT_SECONDS',
      registers: [registry],
    }),
    batchQueueDepth: new Gauge({ name: 'svc_batch_queue_depth', help: 'Batches accepted and not yet processed', registers: [registry] }),
    batchFirstWorkerClaimLatency: new Histogram({
      name: 'svc_batch_first_worker_claim_latency_seconds',
      help: 'From batch acceptance to the first claim of a command it issued',
      buckets: [0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10],
      registers: [registry],
    }),
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
      help: 'Duration of one actor routing transaction (lock, hydrate, transition, persist, commit)',
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.5],
      registers: [registry],
    }),
    routedFromMemory: new Counter({
      name: 'svc_route_from_memory_total',
      help: 'Routings written in one statement from the state this server holds, without reading it first',
      registers: [registry],
    }),
    routeFallbacks: new Counter({
      name: 'svc_route_from_memory_fallback_total',
      help: 'Routings from memory given up for the locked path: the rows had moved on, or the work needs a transaction',
      labelNames: ['reason'],
      registers: [registry],
    }),
    reaperRepublished: new Counter({ name: 'svc_command_reaper_republished_total', help: 'Commands republished by the reaper', registers: [registry] }),
    httpRequests: new Counter({
      name: 'svc_http_requests_total',
      help: 'HTTP requests by route and status code',
      labelNames: ['method', 'route', 'status_code'],
      registers: [registry],
    }),
  };
  return m;
}

export type Metrics = ReturnType<typeof createMetrics>;
