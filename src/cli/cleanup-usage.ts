// The `svc cleanup` help texts, apart from the command so `svc --help` loads nothing else.

export const CLEANUP_SUMMARY = 'cancel stuck executions: no terminal event, started over N minutes ago (--dry-run lists them)';

export const CLEANUP_USAGE = `svc cleanup [--older-than-minutes N] [--dry-run] [--json] [--server URL]

  --older-than-minutes N  executions started over N minutes ago (integer >= 1, default 5)
  --dry-run               list what would be cancelled; change nothing
  --json                  print the server's answer as JSON (cancelled_count, execution_ids, message);
                          a refusal too ({error, status, detail}), its text on stderr as without it
  --server URL            the server (default: $SVC_SERVER_URL, else http://127.0.0.1:8082)

SVC_API_TOKEN, when set, is sent as the caller's API token (role operator or admin).

Each execution gets execution.cancelled (reason "cleanup"): its pending and claimed commands and
its children are cancelled, its local and shared keychain entries removed.

exit codes: 0 done, 1 refused by the server, 2 usage error, 3 server unreachable or not serving now (502-504),
            6 not allowed (401/403: no token, or a role too low)`;
