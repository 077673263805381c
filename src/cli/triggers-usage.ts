// The `svc triggers` help text, apart from the command so `svc --help` loads nothing else.

export const TRIGGERS_SUMMARY = 'list the live triggers (schedules, webhooks, NATS); pause, resume, fire or backfill one';

export const TRIGGERS_USAGE = `svc triggers [list] [--kind schedule|webhook|nats] [--json] [--server URL]
       svc triggers pause|resume PATH NAME [--json] [--server URL]
       svc triggers fire PATH NAME [--payload JSON] [--set key=value]... [--fire-key KEY] [--json] [--server URL]
       svc triggers backfill PATH NAME --from ISO --to ISO [--json] [--server URL]

  list          every live trigger (GET /api/triggers): playbook path, name, kind, state, the
                next fire (schedules), the last fire (execution, outcome, age) and the counts
                of fires started, skipped and refused (errors)
  --kind K      only the triggers of that kind: schedule, webhook or nats
  pause NAME    stops the trigger (a schedule does not fire, a webhook answers 409, a NATS
                consumer stops pulling) until resume; a resumed schedule fires next at its
                next time after now (missed times are not caught up)
  fire          starts the trigger's playbook now (202 {execution_id, duplicate, fire_key,
                outcome}); a schedule renders its own payload with scheduled_time = now
  --payload     a JSON object merged over the trigger's payload (@FILE: read from FILE, @-:
                from standard input)
  --set k=v     one payload value (repeatable, over --payload), read as the type the
                playbook's inputs: declare for k (a string when undeclared)
  --fire-key    the fire's key: a second fire with the same key starts nothing
                (duplicate: true, the first execution)
  backfill      starts a schedule's fires of [--from, --to) (ISO 8601 with a timezone), at most
                1,000; times fired before (by the schedule or an earlier backfill) start nothing
  --from ISO    the first time of the range (a fire at it is started)
  --to ISO      the end of the range (a fire at it is not)
  --json        print the API's answer as JSON
  --server URL  the svc server (default: $SVC_SERVER_URL, else http://127.0.0.1:8082)

examples:
  svc triggers list --kind schedule
  svc triggers pause examples/nightly_etl nightly
  svc triggers fire examples/nightly_etl nightly --set day=2026-01-31
  svc triggers backfill examples/nightly_etl nightly --from 2026-01-01T00:00:00Z --to 2026-02-01T00:00:00Z

SVC_API_TOKEN, when set, is sent as the caller's API token (list: viewer; the rest: operator).
See docs/triggers.md.
exit codes: 0 done, 1 refused by the server (its detail is printed), 2 usage error, 3 server unreachable or not serving now (502-504),
            4 not found (404: no such trigger), 5 conflict (409), 6 not allowed (401/403: no token, or a role too low)`;
