// A fractional setting written `.5` (or `5.`) was refused, "expects a number from 0.001 to
// 2147483 (got ".5")", though it is one; Python's float() takes both forms.
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.ts';

describe('fractional settings', () => {
  it('take .5 and 5. as numbers; text that is no number is still refused naming the variable', () => {
    const c = loadConfig({ SVC_BATCH_ACCEPT_ENQUEUE_TIMEOUT_SECONDS: '.5', SVC_BATCH_PROCESSING_TIMEOUT_SECONDS: '5.', SVC_RETENTION_DAYS: '.25' });
    expect(c.SVC_BATCH_ACCEPT_ENQUEUE_TIMEOUT_SECONDS).toBe(0.5);
    expect(c.SVC_BATCH_PROCESSING_TIMEOUT_SECONDS).toBe(5);
    expect(c.SVC_RETENTION_DAYS).toBe(0.25);
    for (const bad of ['.', '1e3', '-1', '0x10', '1.2.3', '']) {
      if (bad === '') continue; // empty means unset
      expect(() => loadConfig({ SVC_BATCH_STATUS_STREAM_POLL_SECONDS: bad }), bad).toThrow(ConfigError);
      expect(() => loadConfig({ SVC_BATCH_STATUS_STREAM_POLL_SECONDS: bad }), bad).toThrow(/^invalid SVC_BATCH_STATUS_STREAM_POLL_SECONDS: /);
    }
  });
});
