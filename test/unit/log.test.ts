import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../src/log.ts';
import { isSecretKey, MAX_REDACT_DEPTH, MAX_REDACT_NODES } from '../../src/redact-for-log.ts';

function capture() {
  const lines: string[] = [];
  const log = createLogger('info', new Writable({ write: (c, _e, cb) => (lines.push(String(c)), cb()) }));
  return { log, text: () => lines.join(''), last: (): Record<string, unknown> => JSON.parse(lines.at(-1) ?? '{}') };
}

/** An error as HTTP clients throw it: the request config, headers included, hangs off it. */
function clientError(): Error & { config?: unknown } {
  const err: Error & { config?: unknown } = new Error('Request failed with status code 401');
  err.config = { url: 'http://api', headers: { Authorization: 'Bearer tok-ERR', Accept: 'application/json' } };
  return err;
}

describe('logger redaction', () => {
  it('redacts authorization headers, passwords, tokens and data fields wherever they sit', () => {
    const { log, text } = capture();
    log.info({
      req: { headers: { authorization: 'Bearer tok-AAA' } },
      password: 'pw-BBB',
      credential: { password: 'pw-CCC', data: { secret: 'x-DDD' }, token: 'tok-EEE' },
      access_token: 'tok-FFF',
      client_secret: 'cs-GGG',
      data: { anything: 'd-HHH' },
      keep: 'visible',
    }, 'msg');
    const out = text();
    for (const secret of ['tok-AAA', 'pw-BBB', 'pw-CCC', 'x-DDD', 'tok-EEE', 'tok-FFF', 'cs-GGG', 'd-HHH']) expect(out).not.toContain(secret);
    expect(out).toContain('visible');
    expect(out).toContain('[redacted]');
  });

  it('redacts at any depth: {a:{b:{password}}}', () => {
    const { log, last } = capture();
    log.info({ a: { b: { password: 'pw-DEEP', c: { d: { e: { api_key: 'k-DEEPER' } } } } } });
    expect(last()).toMatchObject({ a: { b: { password: '[redacted]', c: { d: { e: { api_key: '[redacted]' } } } } } });
  });

  it('redacts req.body.data (a credential body)', () => {
    const { log, text, last } = capture();
    log.info({ req: { method: 'POST', body: { name: 'db', type: 'postgres', data: { password: 'pw-BODY', host: 'h' } } } });
    expect(text()).not.toContain('pw-BODY');
    expect(last()).toMatchObject({ req: { method: 'POST', body: { name: 'db', type: 'postgres', data: '[redacted]' } } });
  });

  it('redacts err.config.headers.Authorization, logged as err, as the object and nested', () => {
    const { log, text, last } = capture();
    log.error({ err: clientError() }, 'call failed');
    expect(last()).toMatchObject({
      err: { type: 'Error', message: 'Request failed with status code 401', config: { headers: { Authorization: '[redacted]', Accept: 'application/json' } } },
    });
    expect(String((last().err as { stack?: unknown }).stack)).toContain('Request failed');
    log.error(clientError());
    log.warn({ outcome: { error: clientError(), attempts: [clientError()] } });
    expect(text()).not.toContain('tok-ERR');
    expect(last()).toMatchObject({ outcome: { error: { type: 'Error', config: { headers: { Authorization: '[redacted]' } } } } });
  });

  it('redacts top-level headers: cookie, set-cookie, x-api-key, any case', () => {
    const { log, text, last } = capture();
    log.info({ headers: { cookie: 'sid=c-1', 'Set-Cookie': ['sid=c-2'], 'x-api-key': 'k-3', 'X-API-KEY': 'k-4', 'content-type': 'text/plain' } });
    for (const secret of ['c-1', 'c-2', 'k-3', 'k-4']) expect(text()).not.toContain(secret);
    expect(last()).toMatchObject({ headers: { 'content-type': 'text/plain' } });
  });

  it('redacts child-logger bindings', () => {
    const { log, text } = capture();
    log.child({ credential: { token: 'tok-CHILD' }, execution_id: 7 }).info('x');
    expect(text()).not.toContain('tok-CHILD');
    expect(text()).toContain('"execution_id":7');
  });

  it('matches secret keys case-insensitively in any separator style, and leaves look-alikes', () => {
    for (const key of ['Authorization', 'proxy-authorization', 'COOKIE', 'set-cookie', 'password', 'db_password', 'secret', 'client_secret',
      'clientSecret', 'token', 'access_token', 'refreshToken', 'id_token', 'X-Auth-Token', 'api_key', 'apiKey', 'x-api-key', 'private_key',
      'secret_access_key', 'data', 'token_data', 'data_encrypted']) {
      expect(isSecretKey(key), key).toBe(true);
    }
    for (const key of ['auth', 'token_type', 'token_field', 'ttl_field', 'name', 'keychain', 'max_tokens', 'metadata', 'content_type']) {
      expect(isSecretKey(key), key).toBe(false);
    }
  });

  it('stops at a depth bound, on cycles and after a node budget, quickly', () => {
    const { log, text, last } = capture();
    let deep: Record<string, unknown> = { password: 'pw-BOTTOM' };
    for (let i = 0; i < 10_000; i++) deep = { next: deep };
    const cyclic: Record<string, unknown> = { name: 'loop' };
    cyclic.self = cyclic;
    const huge = Array.from({ length: 200_000 }, (_, i) => ({ i, token: `tok-${i}` }));
    const t0 = performance.now();
    log.info({ deep, cyclic, huge });
    expect(performance.now() - t0).toBeLessThan(1_000);
    const out = text();
    expect(out).not.toMatch(/pw-BOTTOM|tok-\d/);
    expect(out).toContain('[too deep]');
    expect(last()).toMatchObject({ cyclic: { name: 'loop', self: '[circular]' } });
    expect(out.length).toBeLessThan(MAX_REDACT_NODES * 100);
    let depth = 0;
    for (let node: unknown = last().deep; typeof node === 'object' && node !== null && 'next' in node; node = node.next) depth++;
    expect(depth).toBeLessThanOrEqual(MAX_REDACT_DEPTH);
  });

  it('leaves what is not a secret as it was', () => {
    const { log, last } = capture();
    const at = new Date('2024-01-02T03:04:05Z');
    log.info({ execution_id: 42, step: 'start', list: [1, 'two', null], at, nested: { auth: 'db_auth', token_type: 'Bearer' } }, 'ok');
    expect(last()).toMatchObject({ msg: 'ok', execution_id: 42, step: 'start', list: [1, 'two', null], at: at.toISOString(), nested: { auth: 'db_auth', token_type: 'Bearer' } });
  });
});
