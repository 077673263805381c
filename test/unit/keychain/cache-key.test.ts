import { describe, expect, it } from 'vitest';
import { cacheKey } from '../../../src/keychain/cache-key.ts';

describe('cacheKey', () => {
  it('formats each scope as the spec says', () => {
    expect(cacheKey('api', 518486534513754563n, 'global', null)).toBe('api:518486534513754563:global');
    expect(cacheKey('api', '518486534513754563', 'local', '518508477736551392')).toBe(
      'api:518486534513754563:518508477736551392',
    );
    expect(cacheKey('ctx', 7, 'shared', 100)).toBe('ctx:7:shared:100');
  });

  it('ignores the execution id for global entries', () => {
    expect(cacheKey('api', 7, 'global', 55)).toBe('api:7:global');
  });

  it('keeps local keys of different executions apart', () => {
    expect(cacheKey('api', 7, 'local', 1)).not.toBe(cacheKey('api', 7, 'local', 2));
    expect(cacheKey('api', 7, 'local', 1)).not.toBe(cacheKey('api', 7, 'shared', 1));
  });

  it('needs an execution id for local and shared', () => {
    expect(() => cacheKey('api', 7, 'local', null)).toThrow("keychain entry 'api' has scope local and needs an execution_id");
    expect(() => cacheKey('api', 7, 'shared', null)).toThrow(
      "keychain entry 'api' has scope shared and needs the root execution_id",
    );
  });

  it('refuses ids that are not non-negative integers and empty names', () => {
    expect(() => cacheKey('api', 'abc', 'global', null)).toThrow(/catalog_id must be a non-negative integer/);
    expect(() => cacheKey('api', -1, 'global', null)).toThrow(/catalog_id/);
    expect(() => cacheKey('api', 1.5, 'global', null)).toThrow(/catalog_id/);
    expect(() => cacheKey('api', 7, 'local', '1:2')).toThrow(/execution_id must be a non-negative integer/);
    expect(() => cacheKey('api', 7, 'local', -3n)).toThrow(/execution_id/);
    expect(() => cacheKey('', 7, 'global', null)).toThrow('keychain name must not be empty');
  });
});
