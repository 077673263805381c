// The `svc token` help text, apart from the command so `svc --help` loads nothing else.
import { API_TOKEN_CACHE_TTL_MS } from '../api/api-token-cache.ts';
import { ROLES } from '../auth/roles.ts';

export const TOKEN_SUMMARY = 'create, list or revoke API tokens (SVC_AUTH=token or gateway); talks to the database directly';

export const TOKEN_USAGE = `svc token create --name NAME --role ${ROLES.join('|')} [--expires-in DURATION | --expires-at TIME] [--json]
       svc token list [--json]
       svc token revoke NAME [--json]

  create   makes an API token and prints it once (only its SHA-256 is stored); it never
           expires unless given a lifetime (--expires-in or --expires-at). Past it the token
           is refused as a revoked one is
  --name NAME  the token's name: 1-100 letters, digits, . _ @ -, starting with a letter or
               digit; unique (a revoked token keeps its name)
  --role ROLE  what its caller may do: viewer reads, operator also starts and controls
               executions, admin also credentials and the keychain (docs/operations.md)
  --expires-in DURATION  its lifetime: 90d (units s, m, h, d, as 1h30m; a bare number is seconds)
  --expires-at TIME      its end: 2026-12-31T18:00:00Z (a date alone is its UTC midnight)
  list     every token: name, role, prefix, created, last used, revoked, expires (once
           some token has a lifetime; --json always: expires_at, null for never, and expired)
  revoke   the token stops working within ${API_TOKEN_CACHE_TTL_MS / 1000} s on every server; its name stays taken
           (--json: the token as list shows it, revoked_at set)
  --json   the answer as JSON on stdout (for programs): create the token and its fields, list
           the tokens, revoke the revoked token

Talks to the database directly: SVC_DATABASE_URL, else the embedded one in SVC_DATA_DIR (a
running \`svc start\` (or \`svc server\`) on the same SVC_DATA_DIR serves it; with none running it
starts it for the command). Clients send a token as
\`Authorization: Bearer <token>\`; \`svc run\` sends SVC_API_TOKEN.
exit codes: 0 done, 1 refused (name taken, no such token), 2 usage error`;
