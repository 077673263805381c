// Whether traces are on, from the standard OpenTelemetry variables: the one rule the server (from
// its parsed config) and the worker (from its environment, as its tools read theirs) both follow,
// so that a worker adds `traceparent` exactly when its server exports the trace. Pure.
import { isTrueText } from '../true-text.ts';

/** The variables that decide, as the config parsed them (or as the environment holds them). */
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

/**
 * The switch as a process environment holds it (a worker's), read as src/config.ts reads the same
 * variables (`OTEL_SDK_DISABLED=1` is true there too, URLs trimmed): a worker whose server is off
 * must not send `traceparent` naming spans nobody exports.
 */
export function traceSwitchOf(env: Readonly<Record<string, string | undefined>>): TraceSwitch {
  return {
    disabled: isTrueText(env.OTEL_SDK_DISABLED ?? ''),
    exporter: env.OTEL_TRACES_EXPORTER?.trim() || 'otlp',
    endpoint: env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim() || undefined,
    tracesEndpoint: env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim() || undefined,
  };
}
