// A worker's trace switch against its server's: for every value the config takes, both say the
// same, so a worker never sends a `traceparent` naming spans its server does not export
// (OTEL_SDK_DISABLED=1 turned the server's traces off and left the worker's on). The worker now
// decides from the same parsed config (workerTraces), not from its raw environment, which no
// longer holds the endpoint (a secret, src/secret-environment.ts) or holds only its _FILE.
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config.ts';
import { tracesConfigured, workerTraces } from '../../../src/telemetry/traces-configured.ts';

const ENDPOINT = 'http://collector:4318';
const agree = (env: Readonly<Record<string, string | undefined>>) => expect(workerTraces(loadConfig(env)) !== undefined, JSON.stringify(env)).toBe(tracesConfigured(loadConfig(env)) !== undefined);

describe('the worker reads the trace switch as the server does', () => {
  it.each(['true', 'TRUE', '1', 'yes', 'on', ' on ', 'false', '0', 'no', 'off', ''])('OTEL_SDK_DISABLED=%j', (disabled) => {
    agree({ OTEL_EXPORTER_OTLP_ENDPOINT: ENDPOINT, OTEL_SDK_DISABLED: disabled });
  });

  it('trims what the config trims', () => {
    for (const env of [{ OTEL_EXPORTER_OTLP_ENDPOINT: ` ${ENDPOINT} ` }, { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: ` ${ENDPOINT}/v1/traces ` }, { OTEL_EXPORTER_OTLP_ENDPOINT: ENDPOINT, OTEL_TRACES_EXPORTER: ' NONE ' }]) agree(env);
  });

  it('salts the ids with the trimmed SVC_TRACE_SALT, as the server does', () => {
    expect(workerTraces(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: ENDPOINT, SVC_TRACE_SALT: ' prod ' }))).toEqual({ salt: 'prod' });
  });
});
