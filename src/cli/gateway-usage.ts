// Kept apart from gateway-command.ts so `svc --help` does not load the gateway.
export const GATEWAY_SUMMARY = 'run the authenticating gateway (OpenID Connect login, bearer tokens, roles) in front of SVC_SERVER_URL';
export const GATEWAY_USAGE = `svc gateway [--port N] [--host ADDRESS]
       svc gateway revoke SUB [--json]

  (none)   serves until SIGINT/SIGTERM; with SVC_OIDC_ISSUER, people's sessions are kept in the
           service database (SVC_DATABASE_URL), shared by every gateway on it (docs/gateway.md)
  --port N          the port it listens on (default: $SVC_GATEWAY_PORT, else 8090; 0: any free one)
  --host ADDRESS    the address it listens on (default: $SVC_GATEWAY_HOST, else 127.0.0.1)
  revoke   ends every session of the person SUB (the provider's \`sub\`) on every gateway at once
  --json   print {"sub": SUB, "sessions_ended": N} on stdout (for programs)

exit codes: 0 done, 1 failed, 2 usage error, 78 invalid settings`;
