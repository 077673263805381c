// A real OpenID provider (the `oidc-provider` package) on 127.0.0.1 port 0 for gateway tests:
// one confidential web client (the gateway's, code flow with PKCE), program clients that get
// JWT access tokens by client credentials, dev login pages where any login name works, and the
// signing key, so tests can also make tokens the provider would have made (expired, other audience).
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, type JWK } from 'jose';
import Provider from 'oidc-provider';

/** Roles each person's account carries in the `roles` claim (dev login: the login name). */
export const PEOPLE_ROLES: Record<string, string[]> = { alice: ['admin'], olivia: ['operator'], victor: ['viewer'], nora: [] };
/** Program clients and the roles their tokens carry; every one has the secret PROGRAM_SECRET. */
export const PROGRAM_ROLES: Record<string, string[]> = { 'program-admin': ['admin'], 'program-operator': ['operator'], 'program-viewer': ['viewer'], 'program-none': [], 'program-reports': ['operator'] };
/** Playbook path patterns in the `svc_paths` claim of program tokens that carry one. */
export const PROGRAM_PATHS: Record<string, string[]> = { 'program-reports': ['reports/*', 'shared/**'] };
export const PROGRAM_SECRET = 'program-secret-0123456789-abcdefghijklmnop';
export const GATEWAY_CLIENT_ID = 'svc-gateway';
export const GATEWAY_CLIENT_SECRET = 'gateway-client-secret-0123456789-abcdefgh';
/** The audience (resource server) of program tokens. */
export const API_AUDIENCE = 'svc-api';

export type TestProvider = {
  issuer: string;
  /** The provider's signing key (private), as the provider holds it. */
  signingKey: JWK;
  /** A JWT access token for a program client (client credentials grant). */
  programToken(clientId: string): Promise<string>;
  close(): Promise<void>;
};

/** Starts a provider whose gateway client may redirect back to each of `gatewayOrigins`. */
export async function startTestProvider(gatewayOrigins: string[]): Promise<TestProvider> {
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  const signingKey: JWK = { ...(await exportJWK(privateKey)), kid: 'test-key-1', alg: 'RS256', use: 'sig' };
  // The port is known before the provider is made: its issuer URL carries it.
  const server: Server = createServer();
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: GATEWAY_CLIENT_ID,
        client_secret: GATEWAY_CLIENT_SECRET,
        redirect_uris: gatewayOrigins.map((o) => `${o}/auth/callback`),
        post_logout_redirect_uris: gatewayOrigins.map((o) => `${o}/`),
        grant_types: ['authorization_code'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_basic',
      },
      ...Object.keys(PROGRAM_ROLES).map((client_id) => ({
        client_id,
        client_secret: PROGRAM_SECRET,
        grant_types: ['client_credentials'],
        response_types: [],
        redirect_uris: [],
        token_endpoint_auth_method: 'client_secret_basic' as const,
      })),
    ],
    jwks: { keys: [signingKey] },
    cookies: { keys: ['test-provider-cookie-key-0123456789'] },
    claims: { openid: ['sub'], profile: ['name'], email: ['email'], roles: ['roles'] },
    conformIdTokenClaims: false,
    ttl: { ClientCredentials: 300, AccessToken: 300, IdToken: 300, Interaction: 600, Session: 3600, Grant: 3600 },
    async findAccount(_ctx, id) {
      return { accountId: id, claims: async () => ({ sub: id, name: `User ${id}`, email: `${id}@example.test`, roles: PEOPLE_ROLES[id] ?? [] }) };
    },
    async extraTokenClaims(_ctx, token) {
      const clientId = 'clientId' in token && typeof token.clientId === 'string' ? token.clientId : undefined;
      if (!clientId || !(clientId in PROGRAM_ROLES)) return undefined;
      return { roles: PROGRAM_ROLES[clientId], ...(PROGRAM_PATHS[clientId] ? { svc_paths: PROGRAM_PATHS[clientId] } : {}) };
    },
    features: {
      devInteractions: { enabled: true },
      clientCredentials: { enabled: true },
      rpInitiatedLogout: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: (_ctx, client) => (client?.clientId && client.clientId in PROGRAM_ROLES ? 'urn:svc:api' : undefined),
        useGrantedResource: () => false,
        getResourceServerInfo: () => ({ scope: 'api', audience: API_AUDIENCE, accessTokenTTL: 300, accessTokenFormat: 'jwt', jwt: { sign: { alg: 'RS256' } } }),
      },
    },
  });
  server.on('request', provider.callback());
  return {
    issuer,
    signingKey,
    async programToken(clientId) {
      const res = await fetch(`${issuer}/token`, {
        method: 'POST',
        headers: { authorization: `Basic ${Buffer.from(`${clientId}:${PROGRAM_SECRET}`).toString('base64')}`, 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ grant_type: 'client_credentials', scope: 'api', resource: 'urn:svc:api' }),
      });
      const body = (await res.json()) as { access_token?: string; error?: string; error_description?: string };
      if (!res.ok || !body.access_token) throw new Error(`token for ${clientId}: ${res.status} ${body.error} ${body.error_description}`);
      return body.access_token;
    },
    close: () =>
      new Promise<void>((ok) => {
        server.closeAllConnections();
        server.close(() => ok());
      }),
  };
}

