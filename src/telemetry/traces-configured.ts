// Whether the server exports traces, from its parsed config: what src/service.ts asks before it
// loads anything of traces (off, nothing below src/telemetry/start-tracing.ts is loaded). A
// worker's pools decide from the same parsed config (workerTraces), so the endpoint given as a
// ..._FILE or moved out of the environment (src/secret-environment.ts) turns both on alike.
import type { Config } from '../config.ts';
import type { CommandTraces } from './command-trace.ts';
import { tracesUrl } from './trace-switch.ts';

/** The URL spans go to, or undefined when traces are off. */
export function tracesConfigured(config: Config): string | undefined {
  return tracesUrl({
    disabled: config.OTEL_SDK_DISABLED,
    exporter: config.OTEL_TRACES_EXPORTER,
    endpoint: config.OTEL_EXPORTER_OTLP_ENDPOINT,
    tracesEndpoint: config.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT,
  });
}

/** A worker pool's traces (its http tasks send `traceparent`) exactly when its server's config exports them. */
export function workerTraces(config: Config): CommandTraces | undefined {
  return tracesConfigured(config) ? { salt: config.SVC_TRACE_SALT } : undefined;
}
