// What an MCP server's status reads as, from its last lifecycle action and that execution's status.

const RUNNING: Record<string, string> = { deploy: 'deploying', undeploy: 'undeploying', restart: 'restarting', status: 'checking' };
const COMPLETED: Record<string, string> = { deploy: 'running', undeploy: 'stopped', restart: 'running', status: 'running' };
const FAILED: Record<string, string> = { status: 'unreachable' };

/**
 * The last known status: `registered` before any action; while the action's execution runs,
 * `deploying`/`undeploying`/…; after it, `running`/`stopped` (deploy, restart, status / undeploy),
 * `<action>_failed` (`unreachable` for a failed status check); `<action>_<status>` for other actions.
 */
export function mcpServerStatus(action: string | null, executionStatus: string | null): string {
  if (!action || !executionStatus) return 'registered';
  if (executionStatus === 'running') return RUNNING[action] ?? `${action}_running`;
  if (executionStatus === 'completed') return COMPLETED[action] ?? `${action}_completed`;
  return FAILED[action] ?? `${action}_failed`;
}
