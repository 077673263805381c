// What the gateway runs by, derived once from the parsed config (src/config.ts): pure, no I/O.
import { ConfigError, isLoopbackHost, type Config } from '../config.ts';
import { isRole, type Role } from '../auth/roles.ts';

export type OidcSettings = {
  issuer: URL;
  clientId: string;
  clientSecret: string | undefined;
  /** The `aud` a bearer JWT must carry. */
  audience: string;
  scopes: string;
  /** Dotted path of the claim holding the caller's roles (a string or an array of strings). */
  rolesClaim: string[];
  /** Dotted path of the claim listing playbook path patterns the caller may start, if configured. */
  pathsClaim: string[] | null;
  /** Provider role name to service role. */
  roleMap: ReadonlyMap<string, Role>;
  /** JWS algorithms accepted on bearer JWTs: asymmetric ones only. */
  algorithms: string[];
};

export type GatewaySettings = {
  port: number;
  host: string;
  /** Origin of the server the gateway fronts (`http://127.0.0.1:8082`). */
  upstream: URL;
  /** Key the identity assertion is signed with (the server's SVC_GATEWAY_SECRET). */
  assertionSecret: string;
  /** The gateway's public origins; the first is canonical. Empty: derive from the listening address. */
  publicOrigins: string[];
  /** Origins allowed by CORS and the CSRF check, besides the gateway's own. */
  corsOrigins: ReadonlySet<string>;
  /** Null: no OpenID provider; bearer JWTs are refused and only API tokens get in. */
  oidc: OidcSettings | null;
  /** Proxies whose forwarding headers are believed (fastify's trustProxy); empty: none. */
  trustedProxies: string[];
  /** The longest a request may take to arrive, headers and body (SVC_REQUEST_TIMEOUT_SECONDS). */
  requestTimeoutSeconds: number;
  sessionIdleMs: number;
  sessionMaxMs: number;
  apiRatePerMinute: number;
  authRatePerMinute: number;
};

/** Parses `a=viewer,b=admin` (validated by config) into a map. */
function parseRoleMap(text: string): Map<string, Role> {
  const map = new Map<string, Role>();
  for (const pair of text.split(',')) {
    const [name, role] = pair.split('=').map((s) => s.trim());
    if (name && isRole(role)) map.set(name, role);
  }
  return map;
}

/**
 * The gateway's settings; throws ConfigError (one line) naming what is missing or unsafe: the assertion key, and a client id
 * when an issuer is set.
 */
export function gatewaySettings(config: Config, port: number = config.SVC_GATEWAY_PORT): GatewaySettings {
  if (!config.SVC_GATEWAY_SECRET) {
    throw new ConfigError('SVC_GATEWAY_SECRET is required: the key the gateway signs identities with, the same as the server\'s (SVC_AUTH=gateway)');
  }
  let oidc: OidcSettings | null = null;
  if (config.SVC_OIDC_ISSUER) {
    if (!config.SVC_OIDC_CLIENT_ID) throw new ConfigError('SVC_OIDC_CLIENT_ID is required with SVC_OIDC_ISSUER');
    const issuer = new URL(config.SVC_OIDC_ISSUER);
    // Keys and tokens travel from the provider: plain http only to a provider on this machine.
    if (issuer.protocol !== 'https:' && !isLoopbackHost(issuer.hostname)) throw new ConfigError('SVC_OIDC_ISSUER must be an https URL (http only for a provider on loopback)');
    oidc = {
      issuer,
      clientId: config.SVC_OIDC_CLIENT_ID,
      clientSecret: config.SVC_OIDC_CLIENT_SECRET,
      audience: config.SVC_OIDC_AUDIENCE ?? config.SVC_OIDC_CLIENT_ID,
      scopes: config.SVC_OIDC_SCOPES,
      rolesClaim: config.SVC_OIDC_ROLES_CLAIM.split('.'),
      pathsClaim: config.SVC_OIDC_PATHS_CLAIM?.split('.') ?? null,
      roleMap: parseRoleMap(config.SVC_OIDC_ROLE_MAP),
      algorithms: config.SVC_OIDC_ALGORITHMS.split(',').map((s) => s.trim()),
    };
  }
  // People log in at these origins, and the login's state and session ride in cookies that are
  // Secure on any but a plain-http loopback origin: a browser keeps none from plain http, so
  // every login would end in "no login in progress" after the person signed in at the provider.
  const plain = config.GATEWAY_PUBLIC_URL.find((o) => !cookiesKept(o));
  if (oidc && plain !== undefined) {
    throw new ConfigError(`GATEWAY_PUBLIC_URL ${plain} is plain http on a host that is not loopback: with SVC_OIDC_ISSUER people log in there, and a browser keeps no Secure cookie (the login's, the session's) from plain http; give its https URL (http only on loopback, for local development)`);
  }
  return Object.freeze({
    port,
    host: config.SVC_GATEWAY_HOST,
    upstream: new URL(config.SVC_SERVER_URL),
    assertionSecret: config.SVC_GATEWAY_SECRET,
    publicOrigins: config.GATEWAY_PUBLIC_URL,
    corsOrigins: new Set(config.CORS_ALLOWED_ORIGINS),
    oidc,
    trustedProxies: config.SVC_GATEWAY_TRUSTED_PROXIES?.split(',').map((s) => s.trim()) ?? [],
    requestTimeoutSeconds: config.SVC_REQUEST_TIMEOUT_SECONDS,
    sessionIdleMs: config.SVC_GATEWAY_SESSION_IDLE_SECONDS * 1000,
    sessionMaxMs: config.SVC_GATEWAY_SESSION_MAX_SECONDS * 1000,
    apiRatePerMinute: config.SVC_GATEWAY_RATE_LIMIT_PER_MINUTE,
    authRatePerMinute: config.SVC_GATEWAY_AUTH_RATE_LIMIT_PER_MINUTE,
  });
}

/**
 * The public origin a request came in on: the one of `publicOrigins` whose host is the request's
 * Host (several hostnames may route to one gateway), else the canonical first; `fallback` (the
 * listening address) when none is configured.
 */
export function publicOriginFor(publicOrigins: readonly string[], host: string | undefined, fallback: string): string {
  if (publicOrigins.length === 0) return fallback;
  const wanted = host?.toLowerCase();
  return publicOrigins.find((o) => new URL(o).host === wanted) ?? publicOrigins[0];
}

/** Cookies are Secure except for a plain-http loopback origin (local development). */
export function cookiesSecure(origin: string): boolean {
  const url = new URL(origin);
  return url.protocol === 'https:' || !isLoopbackHost(url.hostname);
}

/** True when a browser keeps the gateway's cookies from `origin`: https, or plain http on loopback (where they are not Secure). */
export function cookiesKept(origin: string): boolean {
  const url = new URL(origin);
  return url.protocol === 'https:' || isLoopbackHost(url.hostname);
}
