import { setTimeout as delay } from 'node:timers/promises';
import { expect, test } from 'vitest';
import { createLogger } from '../../../src/log.ts';
import { failureLog } from '../../../src/periodic/failure-log.ts';
import { Capture } from '../../helpers/capture.ts';

const linesOf = (out: Capture) => out.text.split('\n').filter(Boolean).map((l) => JSON.parse(l) as { msg: string; err?: string; failures?: number; level: number });

test('a failure that goes on is logged when it starts, again after the repeat interval with its count, and its end once', async () => {
  const out = new Capture();
  const log = failureLog(createLogger('info', out), 'tick', {}, 200);
  const away = new Error('the database is unavailable; try again shortly');
  for (let i = 0; i < 5; i++) log.failed(away, 'tick failed; trying again');
  expect(linesOf(out).map((l) => [l.msg, l.failures])).toEqual([['tick failed; trying again', undefined]]);
  // Another failure is news: logged at once.
  log.failed(new Error('Query read timeout'), 'tick failed; trying again');
  await delay(250);
  log.failed(new Error('Query read timeout'), 'tick failed; trying again');
  log.failed(new Error('Query read timeout'), 'tick failed; trying again');
  log.succeeded();
  log.succeeded(); // nothing failed since: nothing to say
  expect(linesOf(out).map((l) => [l.msg, l.err, l.failures])).toEqual([
    ['tick failed; trying again', away.message, undefined],
    ['tick failed; trying again', 'Query read timeout', 6],
    ['tick failed; trying again', 'Query read timeout', 7],
    ['tick works again', undefined, 8],
  ]);
  // The next failure starts a new run of them.
  log.failed(away, 'tick failed; trying again');
  expect(linesOf(out).at(-1)).toMatchObject({ msg: 'tick failed; trying again', err: away.message });
  expect(linesOf(out).at(-1)?.failures).toBeUndefined();
});
