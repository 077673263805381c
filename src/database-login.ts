// A PostgreSQL URL's login lives in two places: its user-info and its `user` and `password` query
// parameters, which pg (and libpq) take over the user-info. A URL given another login must lose
// both, or `postgres://host/db?user=svc` keeps connecting as svc whatever user-info it is given.

/** `url` logging in as `user` with `password`: user-info set, any `user`/`password` query parameter dropped. */
export function withDatabaseLogin(url: string, user: string, password: string): string {
  const u = new URL(url);
  u.username = user;
  u.password = password;
  u.searchParams.delete('user');
  u.searchParams.delete('password');
  return u.toString();
}
