import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.ts';

describe('loadConfig', () => {
  it('fills every default and freezes the result', () => {
    const c = loadConfig({});
    expect(c.SVC_PORT).toBe(8082);
    expect(c.SVC_DATA_DIR).toBe('./.svc');
    expect(c.SVC_WORKER_CONCURRENCY).toBe(4);
    expect(c.SVC_BATCH_ACCEPT_ENQUEUE_TIMEOUT_SECONDS).toBe(0.25);
    expect(c.SVC_BATCH_ACCEPT_QUEUE_MAXSIZE).toBe(1024);
    expect(c.SVC_BATCH_ACCEPT_WORKERS).toBe(1);
    expect(c.SVC_BATCH_PROCESSING_TIMEOUT_SECONDS).toBe(15);
    expect(c.SVC_BATCH_STATUS_STREAM_POLL_SECONDS).toBe(0.5);
    expect(c.SVC_COMMAND_REAPER_ENABLED).toBe(true);
    expect(c.SVC_COMMAND_REAPER_INTERVAL_SECONDS).toBe(60);
    expect(c.SVC_COMMAND_REAPER_WORKER_STALE_SECONDS).toBe(60);
    expect(c.SVC_COMMAND_REAPER_HEALTHY_HARD_TIMEOUT_SECONDS).toBe(1800);
    expect(c.SVC_COMMAND_REAPER_PENDING_RETRY_SECONDS).toBe(60);
    expect(c.SVC_COMMAND_REAPER_MAX_PER_RUN).toBe(100);
    expect(c.RESUME_WINDOW_MINUTES).toBe(5);
    expect(c.SVC_BATCH_MAX_EVENTS).toBe(256);
    expect(c.SVC_BATCH_MAX_BYTES).toBe(2 * 1024 * 1024);
    expect(c.SVC_ALLOW_SERVICE_DB_TASKS).toBe(false);
    expect(c.SVC_AUTO_RESUME_MODE).toBe('restart');
    expect(Object.isFrozen(c)).toBe(true);
  });

  it('parses given values', () => {
    const c = loadConfig({ SVC_PORT: '9000', SVC_COMMAND_REAPER_ENABLED: 'false', SVC_BATCH_ACCEPT_ENQUEUE_TIMEOUT_SECONDS: '0.5' });
    expect(c.SVC_PORT).toBe(9000);
    expect(c.SVC_COMMAND_REAPER_ENABLED).toBe(false);
    expect(c.SVC_BATCH_ACCEPT_ENQUEUE_TIMEOUT_SECONDS).toBe(0.5);
  });

  it.each([
    ['SVC_PORT', 'abc', /invalid SVC_PORT: expects an integer from 0 to 65535 \(got "abc"\)/],
    ['SVC_BATCH_ACCEPT_WORKERS', '0', /invalid SVC_BATCH_ACCEPT_WORKERS: expects an integer from 1/],
    ['SVC_COMMAND_REAPER_ENABLED', 'maybe', /invalid SVC_COMMAND_REAPER_ENABLED: expects true or false/],
    ['SVC_AUTO_RESUME_MODE', 'later', /invalid SVC_AUTO_RESUME_MODE: expects restart or cancel/],
    ['SVC_LOG_LEVEL', 'loud', /invalid SVC_LOG_LEVEL/],
  ])('rejects %s=%s with one line naming the variable', (name, value, pattern) => {
    expect(() => loadConfig({ [name]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ [name]: value })).toThrow(pattern);
  });

  it('never echoes a database URL or key back', () => {
    try {
      loadConfig({ SVC_DATABASE_URL: 'not a url with password hunter2' });
      expect.unreachable();
    } catch (err) {
      expect(String(err)).toMatch(/SVC_DATABASE_URL/);
      expect(String(err)).not.toMatch(/hunter2/);
    }
  });
});
