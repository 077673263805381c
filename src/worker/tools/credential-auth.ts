import { oauth2Token } from './oauth2-token.ts';
import { staticHttpAuth, stringField } from '../../credential/http-auth.ts';
import type { TaskOutcomeCode } from '../../../machines/error-codes.ts';
import type { ResolvedCredential } from '../../protocol.ts';

export { stringField };

export type CredentialAuth =
  | { ok: true; headers: Record<string, string>; query: Record<string, string>; secrets: string[] }
  | { ok: false; code: TaskOutcomeCode; message: string };

/**
 * The headers and query parameters that authenticate a request with `credential`, by type:
 * bearer, basic, api_key (header or query), custom (its `headers` object): src/credential/http-auth.ts;
 * oauth2 (client credentials, token cached). `skipAuthorization` (the task sets Authorization itself)
 * skips the Authorization-producing types, so no token is fetched for nothing. `secrets`: what it puts
 * in the request that the report must mask (a fetched oauth2 token among them). Messages never hold data.
 */
export async function credentialAuth(credential: ResolvedCredential, signal: AbortSignal, skipAuthorization = false): Promise<CredentialAuth> {
  const { data, type } = credential;
  const bearer = (token: string): CredentialAuth => ({ ok: true, headers: { Authorization: `Bearer ${token}` }, query: {}, secrets: [token] });
  if (type !== 'oauth2' && type !== 'oauth2_client_credentials') return staticHttpAuth(credential, skipAuthorization);
  if (skipAuthorization) return { ok: true, headers: {}, query: {}, secrets: [] };
  // A credential that already holds a token (no token endpoint) is used as a bearer token.
  const ready = stringField(data, 'access_token');
  if (ready && data.token_url === undefined) return bearer(ready);
  const result = await oauth2Token(credential, signal);
  return result.ok ? bearer(result.token) : { ok: false, code: 'auth', message: result.message };
}
