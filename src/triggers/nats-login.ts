import type { Keyring } from '../crypto/keyring.ts';
import { openCredential } from '../crypto/open-credential.ts';
import { natsCredentialLogin, type NatsCredentialLogin } from '../credential/nats-credential-login.ts';

/** How a subscription connects: the server (host:port, also for logs), the client's connect options and the secrets to mask. */
export type NatsLogin = NatsCredentialLogin;

/**
 * The login of a stored `nats` credential (url or servers; user/password, token, creds or nkey:
 * natsCredentialLogin), opened with `keyring`; or why there is none, in words that never hold a secret.
 */
export function natsLogin(keyring: Keyring, credential: { name: string; type: string | null; sealed: string | null }): { login: NatsLogin } | { problem: string } {
  if (credential.type === null || credential.sealed === null) return { problem: `credential '${credential.name}' does not exist` };
  if (credential.type !== 'nats') return { problem: `credential '${credential.name}' is of type ${credential.type}, not nats` };
  const opened = openCredential(keyring, credential.name, credential.sealed);
  if ('problem' in opened) return opened;
  return natsCredentialLogin(credential.name, opened.data);
}
