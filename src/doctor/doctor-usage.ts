// The `svc doctor` help texts, apart from the command so `svc --help` loads nothing else.

export const DOCTOR_SUMMARY = 'find stuck work and what to run next (detect | reachability | repair), or serve those tools over HTTP';

/** Port of `svc doctor serve` without --port: beside `svc gateway`'s 8090 (SVC_GATEWAY_PORT), not on it. */
export const DOCTOR_SERVE_DEFAULT_PORT = 8091;

export const DOCTOR_USAGE = `svc doctor detect|reachability|repair [--json|--text] [--server URL]
       svc doctor serve [--port N] [--host 127.0.0.1] [--server URL] [--token-file PATH]

  detect         runs the read-only detection playbooks on the server (registering them first):
                 stuck executions, commands held by dead workers, stranded PENDING commands,
                 silent worker pools. Thresholds:
                   --stuck-minutes N          no progress for N min (default 30)
                   --pending-seconds N        PENDING unclaimed for N s (default 300)
                   --worker-stale-seconds N   a pool without heartbeat for N s is gone (default 60)
                   --limit N                  ids listed per finding (default 20)
                   --timeout-seconds N        wait for the results up to N s (default 60)
  reachability   the API answers, the server reaches its database, its bus listens
  repair         asks the server's command reaper for one sweep now; an (older) svc server without
                 the endpoint (404) is a no-op, a sweep already running (409) is fine too; a 404
                 from what is not an svc server (no svc health at /api/health) could not run
  serve          the same tools over HTTP, on loopback only (default port ${DOCTOR_SERVE_DEFAULT_PORT}):
                 GET /healthz, GET /tools, POST /tools/{detect,reachability,repair_trigger_reaper}/invoke;
                 callers but of /healthz send Authorization: Bearer <token>, a token it makes at
                 start and writes to --token-file (0600; default ~/.svc/doctor-serve.token)
  --token-file PATH  where serve writes its callers' token (replaced at each start, removed at stop)
  --port N       the port serve listens on (default ${DOCTOR_SERVE_DEFAULT_PORT}; 0: any free one)
  --host ADDRESS the address serve listens on: a loopback one only (default 127.0.0.1)
  --server URL   the server (default: $SVC_SERVER_URL, else http://127.0.0.1:8082)
  --json         print the outcome object {action, severity, generated_at, data} as JSON: what
                 it prints whenever its output is not a terminal (a pipe, a file, a program)
  --text         print the readable summary there too (in a terminal it is the default)

exit codes: 0 ok (healthy, repaired or no-op), 2 anomaly found,
            3 could not run (server unreachable, refused, bad answer, or a bad option),
            130 (SIGTERM 143) detect stopped while it waited: its detection executions cancelled`;
