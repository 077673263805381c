import { describe, expect, it } from 'vitest';
import { http } from '../../../src/worker/tools/http.ts';
import type { TaskOutcome } from '../../../src/worker/tools/types.ts';
import { retryDelayMs, withRetry } from '../../../src/worker/with-retry.ts';
import { startHttpTarget } from '../../helpers/http-target.ts';

const failure: TaskOutcome = { status: 'error', data: null, error: { message: 'HTTP 503 Service Unavailable', code: 'http_status' } };
const success: TaskOutcome = { status: 'ok', data: 'done' };
const always = () => true;

describe('withRetry', () => {
  it('waits delay * backoff^(n-1) between attempts, capped by max_delay_seconds', async () => {
    const waits: number[] = [];
    const sleep = async (ms: number) => {
      waits.push(ms);
    };
    const attemptsSeen: number[] = [];
    const outcome = await withRetry(
      async (attempt) => {
        attemptsSeen.push(attempt);
        return failure;
      },
      { attempts: 5, delay_seconds: 0.5, backoff: 2, max_delay_seconds: 3 },
      always,
      new AbortController().signal,
      sleep,
    );
    expect(outcome).toEqual({ ...failure, attempts: 5 });
    expect(attemptsSeen).toEqual([1, 2, 3, 4, 5]);
    expect(waits).toEqual([500, 1000, 2000, 3000]);
  });

  it('stops at the first success and when shouldRetry says no', async () => {
    const results = [failure, success, failure];
    const ok = await withRetry(async (n) => results[n - 1], { attempts: 3, delay_seconds: 0, backoff: 1 }, always, new AbortController().signal, async () => {});
    expect(ok).toEqual({ ...success, attempts: 2 });

    const invalid: TaskOutcome = { status: 'error', data: null, error: { message: 'bad', code: 'invalid_task' } };
    const notRetried = await withRetry(async () => invalid, { attempts: 3, delay_seconds: 0, backoff: 1 }, (o) => o.error?.code !== 'invalid_task', new AbortController().signal, async () => {});
    expect(notRetried).toEqual({ ...invalid, attempts: 1 });
  });

  it('stops waiting and retrying as soon as the signal aborts', async () => {
    const controller = new AbortController();
    let runs = 0;
    const started = Date.now();
    setTimeout(() => controller.abort(), 100);
    // The default sleep: the 10 s wait is cut short by the abort.
    const outcome = await withRetry(
      async () => {
        runs++;
        return failure;
      },
      { attempts: 5, delay_seconds: 10, backoff: 1 },
      always,
      controller.signal,
    );
    expect(outcome).toEqual({ ...failure, attempts: 1 });
    expect(runs).toBe(1);
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it('stops even when an injected sleep ignores the signal', async () => {
    const controller = new AbortController();
    let runs = 0;
    const outcome = await withRetry(
      async () => {
        runs++;
        return failure;
      },
      { attempts: 5, delay_seconds: 60, backoff: 1 },
      always,
      controller.signal,
      () => {
        controller.abort();
        return new Promise(() => {}); // never resolves
      },
    );
    expect(outcome.attempts).toBe(1);
    expect(runs).toBe(1);
  });

  it('counts a throwing run as a failed attempt', async () => {
    const outcome = await withRetry(
      async (n) => {
        if (n === 1) throw new Error('boom');
        return success;
      },
      { attempts: 2, delay_seconds: 0, backoff: 1 },
      always,
      new AbortController().signal,
      async () => {},
    );
    expect(outcome).toEqual({ ...success, attempts: 2 });
  });

  it('treats odd policies sanely', () => {
    expect(retryDelayMs({ attempts: 3, delay_seconds: 1, backoff: 3 }, 3)).toBe(9000);
    expect(retryDelayMs({ attempts: 3, delay_seconds: Number.NaN, backoff: 2 }, 2)).toBe(0);
    expect(retryDelayMs({ attempts: 3, delay_seconds: 1, backoff: 1e308 }, 5)).toBe(2_147_483_647);
    expect(retryDelayMs({ attempts: 3, delay_seconds: 1, backoff: 1e308, max_delay_seconds: 30 }, 5)).toBe(30_000);
    expect(retryDelayMs({ attempts: 3, delay_seconds: -1, backoff: 2 }, 1)).toBe(0);
  });

  it('retries a real flaky endpoint until it answers 200', async () => {
    const target = await startHttpTarget();
    try {
      const outcome = await withRetry(
        () => http({ name: 'flaky', kind: 'http', url: `${target.url}/flaky?fail=2&key=retry-test` }, { signal: new AbortController().signal, env: {} }),
        { attempts: 3, delay_seconds: 0.01, backoff: 2 },
        (o) => o.error?.code === 'http_status',
        new AbortController().signal,
      );
      expect(outcome).toMatchObject({ status: 'ok', attempts: 3, data: { status: 200, body: { calls: 3 } } });
    } finally {
      await target.close();
    }
  });
});
