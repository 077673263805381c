import { formatElapsed } from './progress-view.ts';
import type { DrainState, RunningCommand } from '../worker/worker.ts';

/** How often a drain says again what it still waits for: on a terminal, and in a log (a service manager's journal). */
export const DRAIN_REPORT_TTY_MS = 5_000;
export const DRAIN_REPORT_LOG_MS = 30_000;
// Named one by one up to this many; the rest are counted.
const NAMED = 5;

type Err = { write(text: string): unknown; isTTY?: boolean };

const commandText = (c: RunningCommand, now: number): string =>
  `execution ${c.execution_id} step ${c.step}${c.loop_index === null ? '' : ` item ${c.loop_index}`} (running ${formatElapsed(now - c.startedAt)})`;

/**
 * One line saying what a draining pool waits for: `draining: 2 commands still running: execution
 * 4 step nap (running 12.3s), …`; undefined once it holds nothing.
 */
export function drainText(state: DrainState, now: number, signal: string): string | undefined {
  const parts: string[] = [];
  if (state.running.length) {
    const oldest = [...state.running].sort((a, b) => a.startedAt - b.startedAt);
    const named = oldest.slice(0, NAMED).map((c) => commandText(c, now));
    if (oldest.length > NAMED) named.push(`and ${oldest.length - NAMED} more`);
    parts.push(`${state.running.length} ${state.running.length === 1 ? 'command' : 'commands'} still running: ${named.join(', ')}`);
  }
  if (state.queued) parts.push(`${state.queued} claimed, to run before the stop`);
  if (state.unreported) parts.push(`${state.unreported} ${state.unreported === 1 ? 'result' : 'results'} to report`);
  if (!parts.length) return undefined;
  return `draining: ${parts.join('; ')}; a second ${signal} exits now, cutting them short`;
}

/**
 * Says on `err` what the drain `stopping` waits for, at once and then every few seconds (5 s on a
 * terminal, 30 s in a log) until it ends: a pool stopping while its tasks run for minutes was
 * silent after `SIGINT: stopping…`, and nothing told the person what it waited for or for how long.
 */
export async function reportDrain(state: () => DrainState, stopping: Promise<void>, signal: string, err: Err = process.stderr): Promise<void> {
  const say = () => {
    const text = drainText(state(), performance.now(), signal);
    if (text) err.write(`${text}\n`);
  };
  say();
  const timer = setInterval(say, err.isTTY ? DRAIN_REPORT_TTY_MS : DRAIN_REPORT_LOG_MS);
  try {
    await stopping;
  } finally {
    clearInterval(timer);
  }
}
