// The `svc catalog` help text, apart from the command so `svc --help` loads nothing else.

export const CATALOG_SUMMARY = 'register playbook, agent and MCP server files in the catalog, printing problems and warnings at file:line:col';

export const CATALOG_USAGE = `svc catalog register FILE... [--json] [--server URL]

  register   sends each file to POST /api/catalog/playbook, or to POST /api/catalog/register as
             an agent (metadata.agent: true) or an MCP server (kind: Mcp); prints "registered PATH version N",
             or "PATH version N unchanged" when the newest version holds the same content;
             warnings as FILE:LINE:COL: warning: MESSAGE, problems as FILE:LINE:COL: PATH: MESSAGE
  --json     one JSON line per file: the server's answer, or {file, error, status, problems}
  --server URL  the server (default: $SVC_SERVER_URL, else http://127.0.0.1:8082)

Sends SVC_API_TOKEN (an operator's) to SVC_SERVER_URL (default http://127.0.0.1:8082).
exit codes: 0 every file registered, 1 a file refused or unreadable, 2 usage error, 3 server unreachable or not serving now (502-504),
            6 not allowed (401/403: a token unknown, revoked or of a role too low; it stops at that file)`;
