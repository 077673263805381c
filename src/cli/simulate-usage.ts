// The `svc simulate` and `svc inspect` help texts, apart from the commands so `svc --help` loads nothing else.

export const SIMULATE_SUMMARY = "run a playbook's statechart with chosen outcomes, no database and no workers";

export const SIMULATE_USAGE = `svc simulate PLAYBOOK.yaml [--outcome STEP=ok|error[:CODE]|timeout[,...]]... [--result STEP=JSON]... [--payload JSON] [--paths] [--json]

  --outcome STEP=OUT  how the commands of STEP end (default ok); a list (ok,error,ok) is used in
                      turn by the step's commands (loop items, re-entries), the last one repeats;
                      a step that waits for a signal gets it (ok: its payload is STEP's example
                      result) or, with a timeout, times out (timeout); a timer step fires (ok);
                      a step without tool always ends ok; timeout elsewhere only for a
                      playbook task with timeout_seconds; error:CODE fails it with that
                      code (error:connection), which a when: may test (error alone has none)
  --payload JSON      the request payload (merged over the playbook's workload); one whose
                      values fail the playbook's inputs: is refused, as a start refuses it;
                      @FILE reads it from FILE, @- from standard input
  --result STEP=JSON  STEP's example result (over the playbook's examples:); a decision (arcs,
                      a loop's in) reading a result with no example stops the run there:
                      status depends_on_data, never a guess
  --paths             every path instead (xstate/graph): each command ok or error (a signal wait:
                      signalled or timed out), oldest first;
                      a path is cut after 5 step runs per step of the playbook (cycles), and
                      at most 2,000 states are explored; prints each path's end state and
                      the steps no path reaches
  --json              print the result as JSON (an invalid playbook: {file, error, problems})

exit codes: 0 simulated, 1 invalid playbook (its problems as FILE:LINE:COL: PATH: MESSAGE), 2 usage error
            (an unreadable file, a step --outcome or --result names that is not there, an outcome
            its step cannot have, a payload a start refuses too; the usage line is printed)`;

export const INSPECT_SUMMARY = 'show an execution move live: its statechart state, active steps and each event (@statelyai/inspect stream)';

export const INSPECT_USAGE = `svc inspect EXECUTION_ID [--json] [--server URL]

  --json        print the inspection events as they come, one JSON object a line
  --server URL  the server (default: $SVC_SERVER_URL, else http://127.0.0.1:8082);
                SVC_API_TOKEN (a viewer's) is sent when the server wants a token

exit codes: 0 the execution ended, 1 request failed (server error, other refusal), 2 usage error, 3 server
            unreachable or not serving now (502-504), 4 not found (404: no such execution), 6 not allowed
            (401/403: no token or one revoked meanwhile, a role too low), as svc status's`;
