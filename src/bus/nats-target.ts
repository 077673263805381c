import { natsUrlLogin, type NatsUserInfo } from '../credential/nats-url-login.ts';

// SVC_NATS_URL taken apart (src/bus/nats-connect.ts connects with it), apart from the NATS client
// so that the settings' check (src/config.ts) loads none of it.

/** SVC_NATS_URL taken apart; `servers` (host:port) are what logs and errors name. */
export type NatsBusTarget = { servers: string[]; tls: boolean; login: NatsUserInfo };

/**
 * SVC_NATS_URL (one URL, or several separated by commas for a NATS cluster) taken apart. The
 * first URL with a login gives it (NATS clients use one login for a cluster). Throws, without
 * quoting the URL, when one is not a nats:// or tls:// URL with a host.
 */
export function natsBusTarget(setting: string): NatsBusTarget {
  const servers: string[] = [];
  let tls = false;
  let login: NatsUserInfo = {};
  for (const [i, text] of setting.split(',').map((s) => s.trim()).entries()) {
    let url: URL;
    try {
      url = new URL(text);
    } catch {
      throw new Error(`SVC_NATS_URL: URL ${i + 1} is not a URL`);
    }
    if ((url.protocol !== 'nats:' && url.protocol !== 'tls:') || !url.host) throw new Error(`SVC_NATS_URL: URL ${i + 1} is not a nats:// or tls:// URL with a host`);
    servers.push(url.port ? url.host : `${url.host}:4222`);
    if (url.protocol === 'tls:') tls = true;
    if (!Object.keys(login).length) login = natsUrlLogin(url, {});
  }
  return { servers, tls, login };
}

/** Whether SVC_NATS_URL can be taken apart (the settings' check: a bad one is exit 78, as other settings). */
export function isNatsBusSetting(setting: string): boolean {
  try {
    natsBusTarget(setting);
    return true;
  } catch {
    return false;
  }
}
