-- MCP servers' lifecycle: the last action dispatched for a resource (deploy, undeploy, status…)
-- and the execution running it. The server's status is derived from that execution's outcome
-- when read (src/db/resource.repo.ts), so no engine hook writes it back.
ALTER TABLE core.resource ADD COLUMN last_action text;
ALTER TABLE core.resource ADD COLUMN last_execution_id bigint;

-- An execution request's `workload.access_token`, kept out of the event log: the workload carries
-- a handle (`svc-secret:<uuid>`) and the token waits here, sealed with the encryption key, until
-- it expires; workers read it by handle (src/api/execution-secrets.ts).
CREATE TABLE core.execution_secret (
  handle      uuid PRIMARY KEY,
  sealed      text NOT NULL,
  expires_at  timestamptz NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX execution_secret_expires_idx ON core.execution_secret (expires_at);
