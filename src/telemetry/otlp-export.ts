// The one module that loads the OpenTelemetry SDK (imported only when traces are on): span
// records become SDK spans with the ids they were given, and a batch processor sends them over
// OTLP/HTTP (JSON) to the configured endpoint. Ids go through the SDK's public `idGenerator`
// option (the next span's id is set just before the span starts; starting is synchronous) and
// the parent through a span context set on the start's context (`trace.setSpanContext`), so a
// span names its parent by id even when that parent is exported later, or by another server.
import { diag, DiagLogLevel, ROOT_CONTEXT, SpanKind, SpanStatusCode, TraceFlags, trace, type Tracer } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { defaultResource, resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, TracerProvider, type IdGenerator } from '@opentelemetry/sdk-trace';
import { ATTR_SERVICE_NAME, ATTR_SERVICE_VERSION } from '@opentelemetry/semantic-conventions';
import { isObject } from '../objects.ts';
import type { SpanRecord } from './execution-trace.ts';

export type OtlpExportSettings = {
  /** Where spans are POSTed (…/v1/traces). */
  url: string;
  serviceName: string;
  serviceVersion: string;
  /** OTEL_RESOURCE_ATTRIBUTES, parsed. */
  resourceAttributes: Record<string, string>;
  /** OTEL_EXPORTER_OTLP_(TRACES_)HEADERS, parsed: sent with every export. */
  headers: Record<string, string>;
  /** The batch processor (OTEL_BSP_*). */
  batch: { scheduledDelayMillis: number; maxQueueSize: number; maxExportBatchSize: number; exportTimeoutMillis: number };
};

export type OtlpExport = {
  emit(spans: readonly SpanRecord[]): void;
  /** Sends what is queued now. */
  flush(): Promise<void>;
  /** Sends what is queued, then stops. */
  shutdown(): Promise<void>;
};

type Log = { warn(obj: object, msg: string): void; debug(obj: object, msg: string): void };

/** The next span's ids, set by `emit` right before it starts the span. */
class GivenIds implements IdGenerator {
  traceId = '';
  spanId = '';
  generateTraceId(): string {
    return this.traceId;
  }
  generateSpanId(): string {
    return this.spanId;
  }
}

/** What a log line keeps of the SDK's complaint: an error's name and message (as JSON, see above) or the text's first line, at most 200 characters. */
export function complaintOf(message: string): string {
  let text = message;
  try {
    const flat: unknown = JSON.parse(message);
    if (isObject(flat) && typeof flat.message === 'string') text = [flat.name, flat.message, flat.code].filter((x) => typeof x === 'string' && x !== '').join(': ');
  } catch {
    // not JSON: the text as it is
  }
  return text.split('\n', 1)[0].slice(0, 200);
}

export function startOtlpExport(s: OtlpExportSettings, log: Log): OtlpExport {
  // The SDK's own complaints (an export that failed, a full queue) go to the service's log, as
  // their first line only: a failed export's complaint is the error flattened to JSON, with the
  // collector's answer and a stack, and a collector may echo the request's headers (its key).
  diag.setLogger(
    {
      error: (message) => log.warn({}, `opentelemetry: ${complaintOf(message)}`),
      warn: (message) => log.warn({}, `opentelemetry: ${complaintOf(message)}`),
      info: () => {},
      debug: () => {},
      verbose: () => {},
    },
    { logLevel: DiagLogLevel.WARN, suppressOverrideMessage: true },
  );
  const ids = new GivenIds();
  const provider = new TracerProvider({
    resource: defaultResource().merge(resourceFromAttributes({ ...s.resourceAttributes, [ATTR_SERVICE_NAME]: s.serviceName, [ATTR_SERVICE_VERSION]: s.serviceVersion })),
    idGenerator: ids,
    spanProcessors: [new BatchSpanProcessor({ exporter: new OTLPTraceExporter({ url: s.url, headers: s.headers }), ...s.batch })],
  });
  const tracer: Tracer = provider.getTracer('svc');
  return {
    emit(spans) {
      for (const r of spans) {
        try {
          ids.traceId = r.traceId;
          ids.spanId = r.spanId;
          const context = r.parentSpanId ? trace.setSpanContext(ROOT_CONTEXT, { traceId: r.traceId, spanId: r.parentSpanId, traceFlags: TraceFlags.SAMPLED, isRemote: true }) : ROOT_CONTEXT;
          const span = tracer.startSpan(r.name, { kind: r.kind === 'client' ? SpanKind.CLIENT : SpanKind.INTERNAL, startTime: r.startMs, attributes: r.attributes }, context);
          for (const e of r.events) span.addEvent(e.name, e.attributes, e.timeMs);
          if (r.error) span.setStatus({ code: SpanStatusCode.ERROR, message: r.error });
          span.end(Math.max(r.startMs, r.endMs));
        } catch (err) {
          log.debug({ err: String(err), span: r.name }, 'span not exported');
        }
      }
    },
    flush: () => provider.forceFlush(),
    shutdown: () => provider.shutdown(),
  };
}
