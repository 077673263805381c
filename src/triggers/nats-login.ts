import type { Keyring } from '../crypto/keyring.ts';
import { openCredential } from '../crypto/open-credential.ts';
import { stringField } from '../credential/http-auth.ts';
import { natsServerUrl } from '../credential/nats-server-url.ts';
import { natsUrlLogin } from '../credential/nats-url-login.ts';

/** How a subscription connects: the server (host:port, also for logs), TLS when the URL is tls://, and its login. */
export type NatsLogin = { server: string; tls: boolean; user?: string; pass?: string; token?: string };

/**
 * The login of a stored `nats` credential (url or servers, and token or user/password, also as the URL's
 * user info: natsUrlLogin), opened with `keyring`; or why there is none, in words that never hold a secret.
 */
export function natsLogin(keyring: Keyring, credential: { name: string; type: string | null; sealed: string | null }): { login: NatsLogin } | { problem: string } {
  if (credential.type === null || credential.sealed === null) return { problem: `credential '${credential.name}' does not exist` };
  if (credential.type !== 'nats') return { problem: `credential '${credential.name}' is of type ${credential.type}, not nats` };
  const opened = openCredential(keyring, credential.name, credential.sealed);
  if ('problem' in opened) return opened;
  const data = opened.data;
  const text = natsServerUrl(data);
  if (!text) return { problem: `credential '${credential.name}' has no url (or servers)` };
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return { problem: `credential '${credential.name}': url is not a URL` };
  }
  if (!url.host) return { problem: `credential '${credential.name}': url names no host` };
  const login = natsUrlLogin(url, { user: stringField(data, 'user'), password: stringField(data, 'password'), token: stringField(data, 'token') });
  return { login: { server: url.host, tls: url.protocol === 'tls:', ...login } };
}
