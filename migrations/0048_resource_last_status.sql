-- An MCP server's status is read from its last lifecycle action's execution (migration 0012,
-- src/api/mcp-status.ts). Retention deletes that execution with its range (src/partitions/), after
-- which the status read `registered` again: a server deployed long ago showed as never deployed.
-- The drop keeps the execution's final status here first; the status is read from it once the
-- execution is gone. A new lifecycle dispatch clears it (its own execution is then the truth).
ALTER TABLE core.resource ADD COLUMN last_execution_status text;

COMMENT ON COLUMN core.resource.last_execution_status IS 'the final status of last_execution_id, kept when retention dropped that execution';
