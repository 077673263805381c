// A `nats` credential read once for every connection (natsCredentialLogin) and checked on write
// (natsLoginProblems through credentialDataErrors): one login kind, .creds and seeds by shape,
// problems that name the field and never quote it.
import { buildAuthenticator, nkeys } from '@nats-io/transport-node';
import { describe, expect, it } from 'vitest';
import { credentialDataErrors } from '../../../src/credential/credential-types.ts';
import { natsCredentialLogin } from '../../../src/credential/nats-credential-login.ts';
import { credentialSecrets } from '../../../src/credential/redact-secrets.ts';
import { credsFile, natsJwt, natsUser } from '../../helpers/nats-operator.ts';

const account = nkeys.createAccount();
const user = natsUser();
const jwt = natsJwt(account, { sub: user.pub, name: 'u', nats: { type: 'user', version: 2 } });
const creds = credsFile(jwt, user.seed);
const login = (data: Record<string, unknown>) => {
  const result = natsCredentialLogin('n', data);
  if ('problem' in result) throw new Error(result.problem);
  return result.login;
};

describe('natsCredentialLogin', () => {
  it('gives the client a JWT signed-nonce login for creds and an NKEY login for nkey', () => {
    const byCreds = login({ url: 'tls://nats.example:4333', creds });
    expect(byCreds).toMatchObject({ server: 'nats.example:4333', hostname: 'nats.example', port: 4333, tls: true, options: { servers: 'nats.example:4333', tls: {} } });
    const auth = buildAuthenticator(byCreds.options)('a-nonce');
    expect(auth).toMatchObject({ jwt, nkey: user.pub });
    // The signature is the seed's over the server's nonce.
    const sig = auth && 'sig' in auth ? auth.sig : '';
    expect(nkeys.fromPublic(user.pub).verify(new TextEncoder().encode('a-nonce'), nkeys.decode(sig ?? ''))).toBe(true);
    expect(byCreds.secrets).toEqual(expect.arrayContaining([creds, jwt, user.seed]));

    const byNkey = login({ servers: ['nats://h1', 'nats://h2'], nkey: user.seed });
    expect(byNkey).toMatchObject({ server: 'h1', port: 4222, tls: false });
    expect(buildAuthenticator(byNkey.options)('n2')).toMatchObject({ nkey: user.pub });
    expect(byNkey.secrets).toContain(user.seed);
  });

  it("keeps user/password and token as they were, and reads a .creds with CRLF or without line breaks (a form's password input drops them)", () => {
    expect(buildAuthenticator(login({ url: 'nats://app:pw@h' }).options)()).toEqual({ user: 'app', pass: 'pw' });
    expect(buildAuthenticator(login({ url: 'nats://h', token: 'tok' }).options)()).toEqual({ auth_token: 'tok' });
    expect(buildAuthenticator(login({ url: 'nats://h', creds: creds.replace(/\n/g, '\r\n') }).options)('x')).toMatchObject({ jwt, nkey: user.pub });
    expect(buildAuthenticator(login({ url: 'nats://h', creds: creds.replace(/\n/g, '') }).options)('x')).toMatchObject({ jwt, nkey: user.pub });
  });

  it('says why a stored credential cannot connect, without the secret', () => {
    const result = natsCredentialLogin('n', { url: 'nats://h', nkey: user.pub });
    expect(result).toEqual({ problem: "credential 'n': Field 'nkey' must be an NKEY user seed (SU…): it is a user's public key" });
  });
});

describe('a nats credential on write', () => {
  const errorsOf = (data: Record<string, unknown>) => {
    const errors = credentialDataErrors('nats', data);
    for (const e of errors) for (const secret of [user.seed, jwt, 'pw-secret']) expect(e).not.toContain(secret);
    return errors;
  };
  it('accepts one login kind and refuses two, naming the fields', () => {
    expect(errorsOf({ url: 'nats://h', creds })).toEqual([]);
    expect(errorsOf({ url: 'nats://h', nkey: user.seed })).toEqual([]);
    expect(errorsOf({ url: 'nats://h', creds, password: 'pw-secret' })).toEqual([
      "Fields 'password' and 'creds' are two logins; a nats credential holds one: user/password, token, creds or nkey",
    ]);
    expect(errorsOf({ url: 'nats://h', user: 'u', token: 't', nkey: user.seed })[0]).toMatch(/^Fields 'user', 'token' and 'nkey' are three logins/);
    expect(errorsOf({ url: 'nats://u:pw-secret@h', nkey: user.seed })).toEqual(["Field 'url' carries a login (user info) and 'nkey' another: keep one"]);
    expect(errorsOf({ servers: 'nats://tok@h', creds })).toEqual(["Field 'servers' carries a login (user info) and 'creds' another: keep one"]);
  });

  it('checks the shape of creds and nkey', () => {
    expect(errorsOf({ url: 'nats://h', creds: jwt })).toEqual(["Field 'creds' must be the text of a .creds file: a user JWT block and a user NKEY seed block"]);
    expect(errorsOf({ url: 'nats://h', creds: creds.slice(0, creds.indexOf('-----BEGIN USER NKEY SEED')) })).toEqual([
      "Field 'creds' must be the text of a .creds file: a user JWT block and a user NKEY seed block",
    ]);
    expect(errorsOf({ url: 'nats://h', creds: credsFile('not-a-jwt', user.seed) })).toEqual(["Field 'creds': its JWT block holds no JWT"]);
    expect(errorsOf({ url: 'nats://h', creds: credsFile(jwt, user.pub) })).toEqual(["Field 'creds': its seed block holds no NKEY user seed (SU…): it is a user's public key"]);
    expect(errorsOf({ url: 'nats://h', creds: credsFile(jwt, '') })).toEqual(["Field 'creds': its seed block holds no NKEY user seed (SU…)"]);
    // A long text of dashes is refused quickly.
    const started = performance.now();
    expect(errorsOf({ url: 'nats://h', creds: `-----BEGIN ${'A '.repeat(30_000)}` })).toHaveLength(1);
    expect(errorsOf({ url: 'nats://h', creds: '-'.repeat(60_000) })).toHaveLength(1);
    expect(performance.now() - started).toBeLessThan(1_000);
    expect(errorsOf({ url: 'nats://h', nkey: `${user.seed.slice(0, -3)}AAA` })).toEqual(["Field 'nkey' must be an NKEY user seed (SU…): it does not decode"]);
    expect(errorsOf({ url: 'nats://h', nkey: new TextDecoder().decode(account.getSeed()) })).toEqual(["Field 'nkey' must be an NKEY user seed (SU…)"]);
    expect(errorsOf({ url: 'nats://h', nkey: 7 })).toEqual(["Field 'nkey' must be string, got integer"]);
  });

  it('masks creds and nkey wherever a credential is masked', () => {
    const secrets = credentialSecrets({ name: 'n', type: 'nats', data: { url: 'nats://h', creds, nkey: user.seed } });
    expect(secrets).toEqual(expect.arrayContaining([creds, user.seed]));
  });
});
