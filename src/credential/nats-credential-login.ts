import { jwtAuthenticator, nkeyAuthenticator, type ConnectionOptions } from '@nats-io/transport-node';
import { stringField } from './http-auth.ts';
import { natsUserSeedProblem, parseNatsCreds } from './nats-creds.ts';
import { natsServerUrl } from './nats-server-url.ts';
import { natsUrlLogin } from './nats-url-login.ts';

// One reading of a `nats` credential for everything that connects with it (the NATS triggers'
// subscriptions, POST /api/credentials/{name}/test): its server, and its login as the NATS
// client's connect options: user/password, token, `creds` (a .creds file: user JWT + NKEY seed)
// or `nkey` (a user seed), the last two through the client's jwtAuthenticator / nkeyAuthenticator.

/** The part of the NATS client's connect options a credential gives. */
export type NatsConnectOptions = Pick<ConnectionOptions, 'servers' | 'tls' | 'user' | 'pass' | 'token' | 'authenticator'>;

export type NatsCredentialLogin = {
  /** host[:port] as the URL names it: what logs name, and the server connected to. */
  server: string;
  hostname: string;
  port: number;
  tls: boolean;
  options: NatsConnectOptions;
  /** Its secrets (password, token, seed, JWT, the .creds text), to mask in what a server or the client said. */
  secrets: string[];
};

const NATS_DEFAULT_PORT = 4222;
const te = (text: string) => new TextEncoder().encode(text);

/**
 * How to connect with the `nats` credential `name` holding `data` (opened): its server (`url`, else
 * the first of `servers`), TLS for tls:// URLs, and its login (`creds`, else `nkey`, else user/
 * password/token over the URL's user info: natsUrlLogin). Or why not, in words that hold no secret.
 */
export function natsCredentialLogin(name: string, data: Record<string, unknown>): { login: NatsCredentialLogin } | { problem: string } {
  const text = natsServerUrl(data);
  if (!text) return { problem: `credential '${name}' has no url (or servers)` };
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return { problem: `credential '${name}': url is not a URL` };
  }
  if (!url.host) return { problem: `credential '${name}': url names no host` };
  const str = (field: string) => stringField(data, field);
  const creds = str('creds');
  const nkey = str('nkey');
  let login: Pick<NatsConnectOptions, 'user' | 'pass' | 'token' | 'authenticator'>;
  let secrets: (string | undefined)[];
  if (creds !== undefined) {
    const parsed = parseNatsCreds(creds);
    if ('problem' in parsed) return { problem: `credential '${name}': ${parsed.problem}` };
    login = { authenticator: jwtAuthenticator(parsed.jwt, te(parsed.seed)) };
    secrets = [creds, parsed.jwt, parsed.seed];
  } else if (nkey !== undefined) {
    const problem = natsUserSeedProblem(nkey);
    if (problem) return { problem: `credential '${name}': ${problem}` };
    login = { authenticator: nkeyAuthenticator(te(nkey.trim())) };
    secrets = [nkey, nkey.trim()];
  } else {
    const { user, pass, token } = natsUrlLogin(url, { user: str('user'), password: str('password'), token: str('token') });
    login = { ...(user !== undefined ? { user, pass } : {}), ...(token !== undefined ? { token } : {}) };
    secrets = [pass, token];
  }
  const tls = url.protocol === 'tls:';
  return {
    login: {
      server: url.host,
      hostname: url.hostname.replace(/^\[|\]$/g, ''),
      port: url.port ? Number(url.port) : NATS_DEFAULT_PORT,
      tls,
      options: { servers: url.host, ...(tls ? { tls: {} } : {}), ...login },
      secrets: secrets.filter((s): s is string => Boolean(s)),
    },
  };
}
