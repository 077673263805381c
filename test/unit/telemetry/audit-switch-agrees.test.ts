// A worker's trace switch (read from its environment) against its server's (from the parsed
// config): for every value the config takes, both say the same, so a worker never sends a
// `traceparent` naming spans its server does not export (OTEL_SDK_DISABLED=1 turned the server's
// traces off and left the worker's on).
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config.ts';
import { traceSwitchOf, tracesUrl } from '../../../src/telemetry/trace-switch.ts';
import { tracesConfigured } from '../../../src/telemetry/traces-configured.ts';

const ENDPOINT = 'http://collector:4318';

describe('the worker reads the trace switch as the server does', () => {
  it.each(['true', 'TRUE', '1', 'yes', 'on', ' on ', 'false', '0', 'no', 'off', ''])('OTEL_SDK_DISABLED=%j', (disabled) => {
    const env = { OTEL_EXPORTER_OTLP_ENDPOINT: ENDPOINT, OTEL_SDK_DISABLED: disabled };
    expect(tracesUrl(traceSwitchOf(env))).toBe(tracesConfigured(loadConfig(env)));
  });

  it('trims what the config trims', () => {
    for (const env of [{ OTEL_EXPORTER_OTLP_ENDPOINT: ` ${ENDPOINT} ` }, { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: ` ${ENDPOINT}/v1/traces ` }, { OTEL_EXPORTER_OTLP_ENDPOINT: ENDPOINT, OTEL_TRACES_EXPORTER: ' NONE ' }]) {
      expect(tracesUrl(traceSwitchOf(env)), JSON.stringify(env)).toBe(tracesConfigured(loadConfig(env)));
    }
  });
});
