// Whether the server exports traces, from its parsed config: what src/service.ts asks before it
// loads anything of traces (off, nothing below src/telemetry/start-tracing.ts is loaded).
import type { Config } from '../config.ts';
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
