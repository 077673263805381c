// The `svc limits` help text, apart from the command so `svc --help` loads nothing else.
import { EXIT } from './executions-usage.ts';

export const LIMITS_SUMMARY = 'list, show, set or delete flow-control limits (concurrency and rate per key; docs/flow-control.md)';

export const LIMITS_USAGE = `svc limits [list] [--json] [--server URL]
       svc limits show NAME [--keys N] [--json] [--server URL]
       svc limits set NAME [--concurrency N] [--rate N/PERIOD [--burst N]] [--json] [--server URL]
       svc limits delete NAME [--json] [--server URL]

  list             every limit (GET /api/limits): defined ones, names playbooks use that are
                   not defined (their work waits until they are), and playbooks' inline
                   limits (@<path>); per limit its concurrency, rate, keys in use, and over
                   all its keys the slots held (running), executions queued and commands
                   waiting
  show NAME        the limit and a table of its keys, busiest first: running, queued, waiting,
                   tokens in the key's bucket now, when the key was last served
  --keys N         at most N keys (the server's default 100, at most 1000)
  set NAME         creates the limit, or replaces it whole: a part not given is removed (the
                   answer says what it was); at least one of --concurrency and --rate
  --concurrency N  at most N running at once per key
  --rate N/PERIOD  at most N per PERIOD per key (a token bucket): 10/1s, 100/1m, 5/500ms,
                   1000/h; PERIOD is a duration (ms, s, m, h, d) in whole
                   milliseconds, from 1ms to 1d
  --burst N        the most a key's bucket holds, taken at once after a quiet time (default:
                   the rate's N); only with --rate
  delete NAME      deletes the limit once its keys are idle (nothing running, queued or
                   waiting: exit ${EXIT.conflict} otherwise); work that names it afterwards waits until it
                   is defined again
  --json           print the API's answer as JSON on stdout (for programs)
  --server URL     the server (default: $SVC_SERVER_URL, else http://127.0.0.1:8082)

examples:
  svc limits set tenant --concurrency 2
  svc limits set partner-api --rate 10/1s --burst 5
  svc limits show tenant --keys 20

SVC_API_TOKEN, when set, is sent as the caller's API token (list, show: viewer; set, delete:
operator). See docs/flow-control.md.
exit codes: ${EXIT.ok} done, ${EXIT.failed} request failed (server error, other refusal, unexpected answer),
            ${EXIT.usage} usage error, ${EXIT.unreachable} server unreachable or not serving now (502-504), ${EXIT.notFound} not found (404: no such limit),
            ${EXIT.conflict} conflict (409: delete of a limit whose keys hold, queue or wait for work),
            ${EXIT.notAllowed} not allowed (401/403: no token, or a role too low)`;
