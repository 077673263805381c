// Whether traces are on, from the standard OpenTelemetry variables as the config parsed them: the
// one rule the server and the worker both follow (src/telemetry/traces-configured.ts), so that a
// worker adds `traceparent` exactly when its server exports the trace. Pure.

/** The variables that decide, as the config parsed them. */
export type TraceSwitch = {
  /** OTEL_SDK_DISABLED: true turns every signal off. */
  disabled: boolean;
  /** OTEL_TRACES_EXPORTER: `otlp` (default) or `none`. */
  exporter: string;
  /** OTEL_EXPORTER_OTLP_ENDPOINT: the base URL; traces go to `<base>/v1/traces`. */
  endpoint?: string;
  /** OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: the full URL of traces (wins over the base). */
  tracesEndpoint?: string;
};

/** Where spans go, or undefined when traces are off (the default: no endpoint set). */
export function tracesUrl(s: TraceSwitch): string | undefined {
  if (s.disabled || s.exporter.trim().toLowerCase() === 'none') return undefined;
  if (s.tracesEndpoint) return s.tracesEndpoint;
  if (!s.endpoint) return undefined;
  return `${s.endpoint.replace(/\/+$/, '')}/v1/traces`;
}
