/**
 * Why a server could not listen, in the terms of the setting that chose its address: a host name
 * that does not resolve (ENOTFOUND) or an address that is none of this machine's (EADDRNOTAVAIL) is
 * a bad setting, and `bad(message)` makes the error for it (a ConfigError for a variable, exit 78;
 * a UsageError for a flag). Anything else (the port in use, a database away) is returned as it was.
 * Node's own words ("getaddrinfo ENOTFOUND nosuch.invalid") named no setting.
 */
export function listenFailure(err: unknown, setting: string, host: string, bad: (message: string) => Error): unknown {
  const code = err instanceof Error && 'code' in err ? err.code : undefined;
  if (code === 'ENOTFOUND') return bad(`${setting}: ${host} does not resolve to an address (getaddrinfo ENOTFOUND)`);
  if (code === 'EADDRNOTAVAIL') return bad(`${setting}: ${host} is not an address of this machine (EADDRNOTAVAIL)`);
  return err;
}
