import { describe, expect, it } from 'vitest';
import { mcpServerStatus } from '../../../src/api/mcp-status.ts';

describe('mcpServerStatus', () => {
  it('is registered before any action', () => {
    expect(mcpServerStatus(null, null)).toBe('registered');
  });

  it('follows the known actions through their execution', () => {
    expect(['running', 'completed', 'failed', 'cancelled'].map((s) => mcpServerStatus('deploy', s))).toEqual(['deploying', 'running', 'deploy_failed', 'deploy_failed']);
    expect(['running', 'completed', 'failed'].map((s) => mcpServerStatus('undeploy', s))).toEqual(['undeploying', 'stopped', 'undeploy_failed']);
    expect(['running', 'completed', 'failed'].map((s) => mcpServerStatus('status', s))).toEqual(['checking', 'running', 'unreachable']);
    expect(['running', 'completed', 'failed'].map((s) => mcpServerStatus('restart', s))).toEqual(['restarting', 'running', 'restart_failed']);
  });

  it('names other actions after themselves', () => {
    expect(['running', 'completed', 'failed'].map((s) => mcpServerStatus('backup', s))).toEqual(['backup_running', 'backup_completed', 'backup_failed']);
  });
});
