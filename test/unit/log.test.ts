import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../src/log.ts';

describe('logger redaction', () => {
  it('redacts authorization headers, passwords, tokens and data fields wherever they sit', () => {
    const lines: string[] = [];
    const log = createLogger('info', new Writable({ write: (c, _e, cb) => (lines.push(String(c)), cb()) }));
    log.info({
      req: { headers: { authorization: 'Bearer tok-AAA' } },
      password: 'pw-BBB',
      credential: { password: 'pw-CCC', data: { secret: 'x-DDD' }, token: 'tok-EEE' },
      access_token: 'tok-FFF',
      client_secret: 'cs-GGG',
      data: { anything: 'd-HHH' },
      keep: 'visible',
    }, 'msg');
    const out = lines.join('');
    for (const secret of ['tok-AAA', 'pw-BBB', 'pw-CCC', 'x-DDD', 'tok-EEE', 'tok-FFF', 'cs-GGG', 'd-HHH']) expect(out).not.toContain(secret);
    expect(out).toContain('visible');
    expect(out).toContain('[redacted]');
  });
});
