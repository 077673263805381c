import { fail } from './outcome.ts';
import { credentialSecrets, redactSecrets } from '../../credential/redact-secrets.ts';
import type { Tool } from './types.ts';

/**
 * `tool` made safe to call from the worker: an unexpected throw becomes an `internal` error
 * outcome, and no credential secret survives in an error message, whatever the tool wrote.
 */
export function guardTool(tool: Tool): Tool {
  return async (task, ctx) => {
    let outcome;
    try {
      outcome = await tool(task, ctx);
    } catch (error) {
      outcome = fail('internal', `${task.kind} tool failed unexpectedly: ${error instanceof Error ? error.message : String(error)}`);
    }
    if (outcome.error) {
      const secrets = credentialSecrets(ctx.credential);
      if (secrets.length > 0) outcome = { ...outcome, error: { ...outcome.error, message: redactSecrets(outcome.error.message, secrets) } };
    }
    return outcome;
  };
}
