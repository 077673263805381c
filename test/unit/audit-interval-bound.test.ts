// A periodic job's interval is a Node timer, which holds at most 2^31-1 ms (~24.8 days): a longer
// one fires after 1 ms. SVC_PARTITION_INTERVAL_SECONDS=2200000 (about 25 days, "rarely") was
// accepted and made the partition work (and its lease statement) run back to back, hundreds of
// times a second; the same with SVC_COMMAND_REAPER_INTERVAL_SECONDS. Such a value is now refused
// at start, naming the variable and the range; the longest accepted one waits as asked.
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, MAX_INTERVAL_SECONDS, MAX_TIMER_MS } from '../../src/config.ts';
import { createLogger } from '../../src/log.ts';
import { createMetrics } from '../../src/metrics.ts';
import { every } from '../../src/periodic/every.ts';

describe('intervals of periodic work', () => {
  it.each(['SVC_PARTITION_INTERVAL_SECONDS', 'SVC_COMMAND_REAPER_INTERVAL_SECONDS'] as const)('%s past what a timer holds is refused at start, naming the range', (name) => {
    expect(() => loadConfig({ [name]: '2200000' })).toThrow(ConfigError);
    expect(() => loadConfig({ [name]: '2200000' })).toThrow(`invalid ${name}: expects an integer from 1 to ${MAX_INTERVAL_SECONDS}`);
    expect(loadConfig({ [name]: String(MAX_INTERVAL_SECONDS) })[name]).toBe(MAX_INTERVAL_SECONDS);
  });

  it.each(['SVC_BATCH_ACCEPT_ENQUEUE_TIMEOUT_SECONDS', 'SVC_BATCH_PROCESSING_TIMEOUT_SECONDS', 'SVC_BATCH_STATUS_STREAM_POLL_SECONDS'] as const)(
    '%s (a timer too) past what a timer holds is refused at start, naming the range',
    (name) => {
      expect(() => loadConfig({ [name]: '2200000' })).toThrow(new RegExp(`invalid ${name}: expects a number from [0-9.]+ to ${MAX_INTERVAL_SECONDS}`));
      expect(loadConfig({ [name]: String(MAX_INTERVAL_SECONDS) })[name]).toBe(MAX_INTERVAL_SECONDS);
    },
  );

  it.each(['OTEL_BSP_SCHEDULE_DELAY', 'OTEL_BSP_EXPORT_TIMEOUT'] as const)('%s (milliseconds of a timer) past what a timer holds is refused at start', (name) => {
    expect(() => loadConfig({ [name]: String(MAX_TIMER_MS + 1) })).toThrow(`invalid ${name}: expects an integer from`);
    expect(loadConfig({ [name]: String(MAX_TIMER_MS) })[name]).toBe(MAX_TIMER_MS);
  });

  it('the longest interval accepted waits: the job runs once (at start), not back to back', async () => {
    let runs = 0;
    const deps = { db: undefined as never, log: createLogger('silent'), metrics: createMetrics() };
    const job = every(deps, { name: 'audit_interval', intervalMs: MAX_INTERVAL_SECONDS * 1000, firstDelayMs: 0 }, async () => {
      runs++;
    });
    await new Promise((r) => setTimeout(r, 200));
    await job.stop();
    expect(runs).toBe(1);
  });
});
