// The `svc run` help texts, apart from the command so `svc --help` loads nothing else.

export const RUN_SUMMARY = 'start a playbook (registering it first when given a file); --wait follows it to the end';

export const RUN_USAGE = `svc run <file.yaml | catalog path> [--payload JSON] [--set key=value]... [--label key=value]... [--priority N] [--wait] [--server URL] [--json]

  <file.yaml>      a playbook file: registered in the catalog at its metadata.path, then started
                   (an agent's or MCP server's file is registered as one, as svc catalog
                   register does, and its start refused: agents start with svc agent run)
  <catalog path>   start the newest catalog version at that path (e.g. examples/fetch_users)
  --payload JSON   workload values for this execution, a JSON object (default {}); @FILE reads
                   it from FILE, @- from standard input (a secret stays off the command line,
                   which ps shows every user of the machine)
  --set key=value  one workload value (repeatable, over --payload), read as the type the
                   playbook's inputs: declare for key (--set n=3 is an integer when n is one;
                   a string when undeclared); a value that fails the inputs is refused (exit 2)
                   before anything is sent
  --label key=value  a label of the execution (repeatable): \`svc list --label key=value\`
                   and GET /api/executions?label=key:value find it
  --priority N     0 (lowest) to 9 (highest): taken first at the claim and at admission past a
                   concurrency limit, over the playbook's priority (5 by default);
                   docs/flow-control.md
  --wait           show live progress until the execution ends and print its result or error
                   (each step, on a terminal a running loop's items done, what a waiting step
                   waits for and how to send its signal, a pause and resume); Ctrl-C stops
                   waiting but does not cancel the execution
  --server URL     the server (default: $SVC_SERVER_URL, else http://127.0.0.1:8082)
  --json           print only the execution status object as JSON on stdout
                   (the final one with --wait, the current one without); a refusal as
                   {error, status, stage, file, problems, detail}; stage "workload" when
                   the workload fails the playbook's inputs before anything is sent; with
                   --wait the live progress goes to stderr when it is a terminal, else nowhere

The start is sent with an Idempotency-Key (one per invocation) and sent again with it when no
answer came or the server was briefly unavailable: a retry never starts a second execution.

exit codes: 0 started / completed, 1 failed, cancelled or rejected by the server,
            2 usage error, 3 server unreachable or not serving now (502-504), 4 not found (404: no
            such playbook), 6 not allowed (401/403: no token, or a role too low), 130 stopped waiting (Ctrl-C)`;
