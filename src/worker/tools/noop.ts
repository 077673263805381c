import type { TaskOutcome } from './types.ts';

/** Does nothing and succeeds at once; benchmarks measure the engine's own overhead with it. */
export async function noop(): Promise<TaskOutcome> {
  return { status: 'ok', data: null };
}
