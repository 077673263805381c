// A limited address refused every token not taken lately, a live one too (integration
// audit-failed-token-neighbours). Now its token is checked against the live tokens; this keeps
// that check from becoming a lookup per made-up token: they are read at most once a second.
import { afterEach, expect, it, vi } from 'vitest';
import { newApiToken } from '../../../src/auth/api-token.ts';
import { FailedTokenLimit } from '../../../src/api/failed-token-limit.ts';

afterEach(() => vi.useRealTimers());

it('reads the live tokens at most once a second for a limited address, and serves a live one', async () => {
  vi.useFakeTimers({ toFake: ['performance', 'Date'] });
  const live = newApiToken();
  let reads = 0;
  const limit = new FailedTokenLimit(2, async () => {
    reads++;
    return [live.hash];
  });
  for (let i = 0; i < 2; i++) limit.record('127.0.0.1', newApiToken().token, false);

  const verdicts = await Promise.all(Array.from({ length: 200 }, () => limit.admit('127.0.0.1', newApiToken().token)));
  expect(verdicts.every((v) => !v.ok)).toBe(true);
  expect(reads).toBe(1);
  expect(await limit.admit('127.0.0.1', live.token)).toEqual({ ok: true });
  expect(reads).toBe(1);

  vi.advanceTimersByTime(1_000);
  expect((await limit.admit('127.0.0.1', newApiToken().token)).ok).toBe(false);
  expect(await limit.admit('127.0.0.1', 'not-a-token')).toMatchObject({ ok: false });
  expect(reads).toBe(2);
});
