// The `svc events` help texts, apart from the command so `svc --help` loads nothing else.

export const EVENTS_SUMMARY = 'send worker events as one batch (POST /api/events/batch); --follow shows its processing';

export const EVENTS_USAGE = `svc events send <FILE.json> [--idempotency-key K] [--follow] [--json] [--server URL]

  <FILE.json>          the batch: {"execution_id": 1, "worker_id": "w1", "events": [{"event_type": ...}, ...]}
  --idempotency-key K  send with this Idempotency-Key: sending again with the same key and file
                       answers the first acceptance again instead of storing the events twice
  --follow             show a live status line until the batch is completed or failed
  --json               print only JSON on stdout: the 202 answer, or with --follow the final status
  --server URL         the server (default: $SVC_SERVER_URL, else http://127.0.0.1:8082);
                       SVC_API_TOKEN (an operator's) is sent when the server wants a token

exit codes: 0 accepted / completed, 1 failed or refused by the server, 2 usage error,
            3 server unreachable or not serving now (502-504), 4 not found (404), 5 conflict (409),
            6 not allowed (401/403: no token, or a role too low), 130 stopped following (Ctrl-C; the batch is processed anyway)`;
