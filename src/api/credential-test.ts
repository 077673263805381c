import { STATUS_CODES } from 'node:http';
import { credentialTypeSpec, isCredentialType } from '../credential/credential-types.ts';
import { staticHttpAuth } from '../credential/http-auth.ts';
import { postgresConnection } from '../credential/postgres-connection.ts';
import { credentialSecrets, redactSecrets } from '../credential/redact-secrets.ts';
import { probePostgres } from '../db/probe-postgres.ts';
import { ServiceError } from '../errors.ts';
import type { ResolvedCredential } from '../protocol.ts';

// Every probe ends within this: an unanswering target is a failed test, not a hung request.
export const CREDENTIAL_TEST_TIMEOUT_MS = 10_000;

export type CredentialTestResult = { ok: boolean; message: string; type: string; duration_ms: number; status?: number };

/**
 * Tries a credential against its target: postgres connects and runs SELECT 1; bearer, basic,
 * api_key and custom send `url` a GET with their auth and report the status; nats connects.
 * Messages are masked of every secret of the credential. Throws 400 credential_test_unsupported
 * for a type without a test and credential_test_needs_url for an HTTP type without `url`.
 */
export async function testCredential(credential: ResolvedCredential, url: string | undefined): Promise<CredentialTestResult> {
  const started = performance.now();
  const { type } = credential;
  const test = isCredentialType(type) ? credentialTypeSpec(type).test : null;
  if (test === null) throw new ServiceError('credential_test_unsupported', { code: 'credential_test_unsupported', message: `credential type '${type}' has no connection test` });
  if (test === 'http' && url === undefined) {
    throw new ServiceError('credential_test_needs_url', { code: 'credential_test_needs_url', message: `testing a ${type} credential needs a url to send the request to` });
  }
  const secrets = credentialSecrets(credential);
  let outcome: { ok: boolean; message: string; status?: number };
  if (test === 'postgres') outcome = await testPostgres(credential, secrets);
  else if (test === 'nats') outcome = await testNats(credential, secrets);
  else outcome = await testHttp(credential, url ?? '', secrets);
  return { ...outcome, message: redactSecrets(outcome.message, secrets), type, duration_ms: Math.round(performance.now() - started) };
}

async function testPostgres(credential: ResolvedCredential, secrets: string[]): Promise<{ ok: boolean; message: string }> {
  const connection = postgresConnection(credential, undefined);
  if (!connection.ok) return { ok: false, message: connection.message };
  secrets.push(...connection.secrets);
  try {
    await probePostgres(connection.config);
    return { ok: true, message: `connected to ${connection.target} and ran SELECT 1` };
  } catch (err) {
    return { ok: false, message: `${connection.target}: ${err instanceof Error ? err.message : String(err)}` };
  }
}

async function testNats(credential: ResolvedCredential, secrets: string[]): Promise<{ ok: boolean; message: string }> {
  // The NATS client loads with the first test of a nats credential, not with every server.
  const [{ natsCredentialLogin }, { probeNats }] = await Promise.all([import('../credential/nats-credential-login.ts'), import('../credential/probe-nats.ts')]);
  const login = natsCredentialLogin(credential.name, credential.data);
  if ('problem' in login) return { ok: false, message: login.problem };
  secrets.push(...login.login.secrets);
  return probeNats(login.login, CREDENTIAL_TEST_TIMEOUT_MS);
}

async function testHttp(credential: ResolvedCredential, url: string, secrets: string[]): Promise<{ ok: boolean; message: string; status?: number }> {
  const auth = staticHttpAuth(credential);
  if (!auth.ok) return { ok: false, message: auth.message };
  secrets.push(...auth.secrets);
  // An absolute http(s) URL: the route's body schema refuses any other (422 naming url).
  const target = new URL(url);
  for (const [name, value] of Object.entries(auth.query)) target.searchParams.set(name, value);
  const where = `${target.origin}${target.pathname}`;
  try {
    const response = await fetch(target, { headers: auth.headers, redirect: 'manual', signal: AbortSignal.timeout(CREDENTIAL_TEST_TIMEOUT_MS) });
    // The body is never read into the answer: a target may echo what it was sent.
    await response.body?.cancel().catch(() => {});
    const text = `HTTP ${response.status} ${response.statusText || STATUS_CODES[response.status] || ''}`.trim();
    return { ok: response.status < 400, message: `${where} answered ${text}`, status: response.status };
  } catch (err) {
    const cause = err instanceof Error && err.cause instanceof Error ? err.cause.message : '';
    return { ok: false, message: `${where}: ${err instanceof Error ? err.message : String(err)}${cause ? ` (${cause})` : ''}` };
  }
}
