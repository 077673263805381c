// Traces on (src/service.ts imports this module only then): the exporter from the parsed config,
// the executions' traces in front of it, and a read of the event log for the gaps they find.
import { readFileSync } from 'node:fs';
import type { Config } from '../config.ts';
import { cancelledClaims } from '../db/command.repo.ts';
import { loadEventsAfter } from '../db/execution.repo.ts';
import type { Queryable } from '../db/queryable.ts';
import type { Logger } from '../log.ts';
import { databaseNow, type WaitClock } from '../waits/wait-clock.ts';
import { urlForLog } from '../redact-for-log.ts';
import { ExecutionTraces } from './execution-traces.ts';
import { startOtlpExport } from './otlp-export.ts';
import { tracesConfigured } from './traces-configured.ts';
import type { TraceSink } from './trace-sink.ts';

export type Tracing = TraceSink & {
  readonly traces: ExecutionTraces;
  /** Sends the spans made so far (after the catch-ups under way). */
  flush(): Promise<void>;
  /** Sends what is left, then stops. */
  shutdown(): Promise<void>;
};

/** The resource's `service.name` when neither OTEL_SERVICE_NAME nor OTEL_RESOURCE_ATTRIBUTES names one. */
const DEFAULT_SERVICE_NAME = 'svc';

const PACKAGE_VERSION = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;

/** A `k=v,k2=v2` list (values percent-encoded: OTEL_RESOURCE_ATTRIBUTES, OTEL_EXPORTER_OTLP_HEADERS) as an object. */
export function keyValuePairsOf(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const pair of text.split(',')) {
    const i = pair.indexOf('=');
    if (i <= 0) continue;
    const key = pair.slice(0, i).trim();
    const raw = pair.slice(i + 1).trim();
    let value = raw;
    try {
      value = decodeURIComponent(raw);
    } catch {
      // kept as written
    }
    if (key) out[key] = value;
  }
  return out;
}

/** Starts exporting traces as `config` says; undefined when traces are off. */
export function startTracing(config: Config, deps: { db: Queryable; log: Logger; waitClock?: WaitClock }): Tracing | undefined {
  const url = tracesConfigured(config);
  if (!url) return undefined;
  const protocol = config.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ?? config.OTEL_EXPORTER_OTLP_PROTOCOL;
  // The endpoint may carry a login (user:password@host, sent as Basic auth): never in a log line.
  const shown = urlForLog(url);
  if (protocol === 'http/protobuf') deps.log.info({ url: shown }, 'traces are sent as OTLP/HTTP JSON (http/json), which OTLP/HTTP receivers take beside http/protobuf');
  const resourceAttributes = keyValuePairsOf(config.OTEL_RESOURCE_ATTRIBUTES);
  // As the OpenTelemetry specification says: OTEL_SERVICE_NAME wins, else the resource's own.
  const serviceName = config.OTEL_SERVICE_NAME ?? (resourceAttributes['service.name'] || DEFAULT_SERVICE_NAME);
  const exporter = startOtlpExport(
    {
      url,
      serviceName,
      serviceVersion: PACKAGE_VERSION,
      resourceAttributes,
      // The traces' own headers win over the general ones, as the specification says.
      headers: { ...keyValuePairsOf(config.OTEL_EXPORTER_OTLP_HEADERS ?? ''), ...keyValuePairsOf(config.OTEL_EXPORTER_OTLP_TRACES_HEADERS ?? '') },
      batch: {
        scheduledDelayMillis: config.OTEL_BSP_SCHEDULE_DELAY,
        maxQueueSize: config.OTEL_BSP_MAX_QUEUE_SIZE,
        maxExportBatchSize: Math.min(config.OTEL_BSP_MAX_EXPORT_BATCH_SIZE, config.OTEL_BSP_MAX_QUEUE_SIZE),
        exportTimeoutMillis: config.OTEL_BSP_EXPORT_TIMEOUT,
      },
    },
    deps.log,
  );
  const traces = new ExecutionTraces({
    salt: config.SVC_TRACE_SALT,
    readEvents: (id, after, limit) => loadEventsAfter(deps.db, id, after, limit),
    readClaims: (id, seqs) => cancelledClaims(deps.db, id, seqs),
    emit: (spans) => exporter.emit(spans),
    log: deps.log,
    // The times of the events this server writes on the database's clock, as reported ones are (src/api/reported-times.ts).
    now: () => databaseNow(deps),
  });
  deps.log.info({ url: shown, service: serviceName }, 'exporting traces');
  return {
    traces,
    committed: (unit) => traces.committed(unit),
    async flush() {
      await traces.settled();
      await exporter.flush();
    },
    async shutdown() {
      await traces.settled();
      await exporter.shutdown();
    },
  };
}
