// A `nats` credential names its server as `url` or, as DESIGN.md writes it, `servers`.
import { describe, expect, it } from 'vitest';
import { credentialDataErrors } from '../../../src/credential/credential-types.ts';
import { natsServerUrl } from '../../../src/credential/nats-server-url.ts';

describe('a nats credential with servers', () => {
  it('is accepted as a URL, a comma-separated list or a list of URLs, with a login or a token', () => {
    expect(credentialDataErrors('nats', { servers: 'nats://127.0.0.1:4222', user: 'u', password: 'p' })).toEqual([]);
    expect(credentialDataErrors('nats', { servers: 'nats://a:4222, nats://b:4222', token: 't' })).toEqual([]);
    expect(credentialDataErrors('nats', { servers: ['nats://a:4222', 'tls://b:4222'] })).toEqual([]);
  });

  it('needs url or servers; servers must be URLs (never quoted)', () => {
    expect(credentialDataErrors('nats', { user: 'u' })).toEqual(['Missing required field: url (or one of servers)']);
    expect(credentialDataErrors('nats', { servers: 42 })).toEqual(["Field 'servers' must be string or array of strings, got integer"]);
    expect(credentialDataErrors('nats', { servers: ['nats://a:4222', 'not a url s3cret'] })).toEqual(["Field 'servers' must be a URL or a list of URLs"]);
    expect(credentialDataErrors('nats', { servers: [] })).toEqual(['Missing required field: url (or one of servers)']);
  });

  it('natsServerUrl: url first, else the first of servers', () => {
    expect(natsServerUrl({ url: 'nats://u:4222', servers: 'nats://s:4222' })).toBe('nats://u:4222');
    expect(natsServerUrl({ servers: ' nats://a:4222 ,nats://b:4222' })).toBe('nats://a:4222');
    expect(natsServerUrl({ servers: ['', 'tls://b:4222'] })).toBe('tls://b:4222');
    expect(natsServerUrl({ servers: [] })).toBeUndefined();
    expect(natsServerUrl({})).toBeUndefined();
  });
});
