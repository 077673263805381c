import { describe, expect, test } from 'vitest';
import { cancelledAsUnavailable, classifyDatabaseError, isDatabaseUnavailable } from '../../../src/db/classify-database-error.ts';
import { ServiceError } from '../../../src/errors.ts';

const pgError = (code: string, message = 'x'): Error => Object.assign(new Error(message), { code });

describe('isDatabaseUnavailable', () => {
  test.each([
    ['admin shutdown', pgError('57P01')],
    ['cannot connect now', pgError('57P03')],
    ['too many connections', pgError('53300')],
    ['the service login refused (its password changed)', pgError('28P01', 'password authentication failed for user "svc"')],
    ['the service login refused (NOLOGIN, pg_hba)', pgError('28000')],
    ['the service database gone (renamed, dropped for a restore)', pgError('3D000', 'database "svc" does not exist')],
    ['connections not allowed (ALLOW_CONNECTIONS false)', pgError('55000', 'database "svc" is not currently accepting connections')],
    ['connection exception class 08', pgError('08006')],
    ['refused socket', pgError('ECONNREFUSED')],
    ['Unix socket gone', Object.assign(new Error('connect ENOENT'), { code: 'ENOENT', syscall: 'connect' })],
    ['pg without a code', new Error('Connection terminated unexpectedly')],
    ['no answer within query_timeout (a database that hangs)', new Error('Query read timeout')],
    ['every address refused', new AggregateError([pgError('ECONNREFUSED'), pgError('ECONNREFUSED')])],
    ['already classified', new ServiceError('database_unavailable')],
  ])('%s: away', (_what, err) => expect(isDatabaseUnavailable(err)).toBe(true));

  test.each([
    ['syntax error', pgError('42601')],
    ['another 55000 (a sequence with no value yet)', pgError('55000', 'currval of sequence "s" is not yet defined in this session')],
    ['protocol violation (the client is wrong)', pgError('08P01')],
    ['a file not found that is no connect', Object.assign(new Error('open ENOENT'), { code: 'ENOENT', syscall: 'open' })],
    ['another domain error', new ServiceError('not_found', 'execution 1 not found')],
    ['not an error', 'Connection terminated'],
  ])('%s: not away', (_what, err) => expect(isDatabaseUnavailable(err)).toBe(false));
});

test('classifyDatabaseError wraps only what says the database is away, keeping the cause', () => {
  const away = pgError('57P01', 'terminating connection due to administrator command');
  const classified = classifyDatabaseError(away);
  expect(classified).toBeInstanceOf(ServiceError);
  expect((classified as ServiceError).code).toBe('database_unavailable');
  expect((classified as ServiceError).cause).toBe(away);
  const wrong = pgError('23505');
  expect(classifyDatabaseError(wrong)).toBe(wrong);
});

test('cancelledAsUnavailable answers a cancelled statement (57014, 55P03) as database_unavailable, nothing else', () => {
  for (const code of ['57014', '55P03']) {
    const cancelled = pgError(code, 'canceling statement due to statement timeout');
    const out = cancelledAsUnavailable(cancelled);
    expect(out).toBeInstanceOf(ServiceError);
    expect((out as ServiceError).code).toBe('database_unavailable');
    expect((out as ServiceError).cause).toBe(cancelled);
    // Db leaves it as it is: the batch intake reads 57014 as its own deadline.
    expect(classifyDatabaseError(cancelled)).toBe(cancelled);
  }
  const wrong = pgError('23505');
  expect(cancelledAsUnavailable(wrong)).toBe(wrong);
  expect(cancelledAsUnavailable('57014')).toBe('57014');
});
