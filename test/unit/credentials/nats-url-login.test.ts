import { describe, expect, it } from 'vitest';
import { natsUrlLogin } from '../../../src/credential/nats-url-login.ts';

describe('natsUrlLogin', () => {
  it('a URL user without a password is a token (nats://TOKEN@host); with one, a user and password', () => {
    expect(natsUrlLogin(new URL('nats://s3cr%2Ft@host:4222'), {})).toEqual({ token: 's3cr/t' });
    expect(natsUrlLogin(new URL('nats://app:pw@host:4222'), {})).toEqual({ user: 'app', pass: 'pw' });
    expect(natsUrlLogin(new URL('nats://host:4222'), {})).toEqual({});
  });

  it("the fields win over the URL; a URL user beside a password field is that password's user", () => {
    expect(natsUrlLogin(new URL('nats://app@host'), { password: 'pw' })).toEqual({ user: 'app', pass: 'pw' });
    expect(natsUrlLogin(new URL('nats://app:old@host'), { user: 'svc', password: 'new' })).toEqual({ user: 'svc', pass: 'new' });
    expect(natsUrlLogin(new URL('nats://host'), { token: 't' })).toEqual({ token: 't' });
    expect(natsUrlLogin(new URL('nats://other@host'), { token: 't' })).toEqual({ token: 't' });
    expect(natsUrlLogin(new URL('nats://app@host'), { user: 'svc' })).toEqual({ user: 'svc' });
  });
});
