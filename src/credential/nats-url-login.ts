/** A NATS login: a user and password, or a token. */
export type NatsUserInfo = { user?: string; pass?: string; token?: string };

/**
 * The login of a `nats` credential: its `user`, `password` and `token` fields over the user info
 * of its `url`. A URL user without a password (`nats://s3cr3t@host:4222`) is a token, as NATS's
 * clients and `nats` CLI read it, unless the fields name a user or password to go with it.
 */
export function natsUrlLogin(url: URL, fields: { user?: string; password?: string; token?: string }): NatsUserInfo {
  const urlUser = url.username ? decodeURIComponent(url.username) : undefined;
  const urlPass = url.password ? decodeURIComponent(url.password) : undefined;
  const urlToken = urlUser !== undefined && urlPass === undefined && fields.user === undefined && fields.password === undefined ? urlUser : undefined;
  const user = fields.user ?? (urlToken === undefined ? urlUser : undefined);
  const pass = fields.password ?? urlPass;
  const token = fields.token ?? urlToken;
  return { ...(user !== undefined ? { user } : {}), ...(pass !== undefined ? { pass } : {}), ...(token !== undefined ? { token } : {}) };
}
