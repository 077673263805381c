// The OTLP endpoint may carry a login (user:password@host, which the exporter sends as Basic
// auth): the lines startTracing logs name the endpoint without it.
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config.ts';
import type { Queryable } from '../../../src/db/queryable.ts';
import { createLogger } from '../../../src/log.ts';
import { urlForLog } from '../../../src/redact-for-log.ts';
import { startTracing } from '../../../src/telemetry/start-tracing.ts';

const PASSWORD = 'otlp-pw-5f2c81';

describe('startTracing', () => {
  it('logs its endpoint without the login', async () => {
    const lines: string[] = [];
    const log = createLogger('info', new Writable({ write: (c, _e, cb) => (lines.push(String(c)), cb()) }));
    const config = loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: `http://collector:${PASSWORD}@127.0.0.1:1`, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf' });
    // Nothing is read at the start: a database that refuses every query stands in.
    const db: Queryable = { query: () => Promise.reject(new Error('no database here')) };
    const tracing = startTracing(config, { db, log });
    await tracing?.shutdown();
    expect(lines.some((l) => l.includes('exporting traces') && l.includes('127.0.0.1:1'))).toBe(true);
    expect(lines.some((l) => l.includes('http/json'))).toBe(true);
    expect(lines.join('\n')).not.toContain(PASSWORD);
    expect(lines.join('\n')).not.toContain('collector');
  });

  it('urlForLog keeps a URL without a login as it is, and text that is no URL', () => {
    expect(urlForLog('http://127.0.0.1:4318/v1/traces')).toBe('http://127.0.0.1:4318/v1/traces');
    expect(urlForLog('https://u:p@otel.example:4318/x?y=1')).toBe('https://%5Bredacted%5D@otel.example:4318/x?y=1');
    expect(urlForLog('not a url')).toBe('not a url');
  });
});
