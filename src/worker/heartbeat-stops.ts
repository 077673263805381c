import type { Logger } from '../log.ts';
import type { HeartbeatAnswer } from '../protocol.ts';
import { commandCancelled, commandSuperseded } from './tools/outcome.ts';

/**
 * Stops the commands a heartbeat's answer names among those a pool runs (`running`, by id):
 * `cancelled` ones, and `superseded` ones another claim took over after the pool went silent
 * (stopped, paused, cut off), which running on would do twice at once, for a refused report.
 */
export function stopNamedCommands(answer: Partial<HeartbeatAnswer>, running: ReadonlyMap<number, AbortController>, log: Logger): void {
  for (const id of Array.isArray(answer.cancelled) ? answer.cancelled : []) {
    if (typeof id === 'number') running.get(id)?.abort(commandCancelled());
  }
  for (const id of Array.isArray(answer.superseded) ? answer.superseded : []) {
    const command = typeof id === 'number' ? running.get(id) : undefined;
    if (!command) continue;
    log.warn({ command_id: id }, `command ${id} was taken over by another claim; stopping it here`);
    command.abort(commandSuperseded());
  }
}
