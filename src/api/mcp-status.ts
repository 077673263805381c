// What an MCP server's status reads as, from its last lifecycle action and that execution's status.

const RUNNING: Record<string, string> = { deploy: 'deploying', undeploy: 'undeploying', restart: 'restarting', status: 'checking' };
const COMPLETED: Record<string, string> = { deploy: 'running', undeploy: 'stopped', restart: 'running', status: 'running' };
const FAILED: Record<string, string> = { status: 'unreachable' };
// An execution that has not ended: queued for admission or paused, the action is still under way
// (it goes on once admitted or resumed), so it reads as running, never as failed.
const UNDER_WAY = new Set(['running', 'queued', 'paused']);

/**
 * The last known status: `registered` before any action; while the action's execution has not
 * ended (running, queued, paused), `deploying`/`undeploying`/…; after it, `running`/`stopped`
 * (deploy, restart, status / undeploy), `<action>_failed` (`unreachable` for a failed status
 * check); `<action>_<running|completed|failed>` for other actions.
 */
export function mcpServerStatus(action: string | null, executionStatus: string | null): string {
  if (!action || !executionStatus) return 'registered';
  if (UNDER_WAY.has(executionStatus)) return RUNNING[action] ?? `${action}_running`;
  if (executionStatus === 'completed') return COMPLETED[action] ?? `${action}_completed`;
  return FAILED[action] ?? `${action}_failed`;
}
