// The OpenID provider as the gateway knows it: its discovery document (openid-client) and JWKS
// (jose's remote key set, cached and refreshed on an unknown `kid`). Discovery is retried in the
// background until it succeeds, so the gateway starts while the provider is still coming up;
// /ready says whether it has.
import * as client from 'openid-client';
import { createLocalJWKSet, createRemoteJWKSet, customFetch, type FetchImplementation, type JWTVerifyGetKey } from 'jose';
import type { Logger } from '../log.ts';
import { KeysUnavailable, VERIFIED_JWT_CACHE_MS } from './bearer-jwt.ts';
import type { OidcSettings } from './settings.ts';

/** Wait between discovery attempts, in ms. */
export const DISCOVERY_RETRY_MS = 2_000;

/**
 * How long the provider's key set is used before it is fetched again, in ms (jose's default is
 * 10 minutes): with a verified token remembered VERIFIED_JWT_CACHE_MS, a key the provider removed
 * (rotated out after a leak) stops counting within a minute, as docs/gateway.md says.
 */
export const JWKS_MAX_AGE_MS = 60_000 - VERIFIED_JWT_CACHE_MS;

/**
 * How soon after a fetch of the key set a token naming a key it lacks fetches it again, in ms
 * (jose's `cooldownDuration`; its default, 30 s, is as long as JWKS_MAX_AGE_MS, so a key the
 * provider had just rotated in was refused until the set aged out). Concurrent fetches are one, so
 * a flood of tokens naming unknown keys costs the provider at most one request per cooldown.
 */
export const JWKS_COOLDOWN_MS = 5_000;

/**
 * Fetches the key set, failing with KeysUnavailable when the provider cannot be reached or does
 * not answer 200: jose would otherwise throw the network's own error (a 500) or call the token
 * invalid (a 401) when nothing is known about it.
 */
const fetchKeys: FetchImplementation = async (url, options) => {
  let res: Response;
  try {
    res = await fetch(url, options);
  } catch (err) {
    throw new KeysUnavailable('the identity provider\'s keys (JWKS) could not be fetched', { cause: err });
  }
  if (res.status !== 200) {
    await res.body?.cancel();
    throw new KeysUnavailable(`the identity provider's keys (JWKS) answered HTTP ${res.status}`);
  }
  return res;
};

/**
 * The provider's key set as jose's remote set keeps it (fetched again once JWKS_MAX_AGE_MS old, or
 * for a token naming a key it lacks once JWKS_COOLDOWN_MS old),
 * but while the provider cannot be reached (KeysUnavailable) the last set it served stands: it
 * cannot have told of a removal meanwhile, and an outage of the provider should not refuse every
 * program's token. Never fetched yet: KeysUnavailable (a 503).
 */
function providerKeys(url: URL): JWTVerifyGetKey {
  const remote = createRemoteJWKSet(url, { cacheMaxAge: JWKS_MAX_AGE_MS, cooldownDuration: JWKS_COOLDOWN_MS, [customFetch]: fetchKeys });
  return async (header, token) => {
    try {
      return await remote(header, token);
    } catch (err) {
      const last = err instanceof KeysUnavailable ? remote.jwks() : undefined;
      if (!last) throw err;
      return createLocalJWKSet(last)(header, token);
    }
  };
}

export type LoadedProvider = { config: client.Configuration; keys: JWTVerifyGetKey; issuer: string };

export class IdentityProvider {
  #loaded: LoadedProvider | undefined;
  #timer: NodeJS.Timeout | undefined;
  #stopped = false;

  readonly settings: OidcSettings;
  readonly #log: Logger;

  constructor(settings: OidcSettings, log: Logger) {
    this.settings = settings;
    this.#log = log;
  }

  /** The discovered provider, or undefined while discovery has not succeeded. */
  get loaded(): LoadedProvider | undefined {
    return this.#loaded;
  }

  /** Tries discovery now; on failure keeps retrying every DISCOVERY_RETRY_MS until stop(). */
  async start(): Promise<void> {
    if (await this.#discover()) return;
    const retry = () => {
      if (this.#stopped) return;
      this.#timer = setTimeout(() => void this.#discover().then((ok) => (ok ? undefined : retry())), DISCOVERY_RETRY_MS);
    };
    retry();
  }

  stop(): void {
    this.#stopped = true;
    clearTimeout(this.#timer);
  }

  async #discover(): Promise<boolean> {
    const s = this.settings;
    try {
      // Plain http only for a loopback issuer (a provider run beside the gateway, in tests or development).
      const insecure = s.issuer.protocol === 'http:';
      const config = await client.discovery(
        s.issuer,
        s.clientId,
        s.clientSecret,
        s.clientSecret ? client.ClientSecretBasic(s.clientSecret) : client.None(),
        insecure ? { execute: [client.allowInsecureRequests] } : undefined,
      );
      const meta = config.serverMetadata();
      if (!meta.jwks_uri) throw new Error('the discovery document names no jwks_uri');
      this.#loaded = { config, keys: providerKeys(new URL(meta.jwks_uri)), issuer: meta.issuer };
      this.#log.info({ issuer: meta.issuer }, 'gateway: identity provider metadata loaded');
      return true;
    } catch (err) {
      this.#log.warn({ issuer: s.issuer.href, cause: err instanceof Error ? err.message : String(err) }, 'gateway: identity provider discovery failed; retrying');
      return false;
    }
  }
}
