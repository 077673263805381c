import { CLEAR_LINE, SPINNER } from './progress-view.ts';

type Tty = { write(text: string): unknown; columns?: number };

/**
 * One line on a terminal, redrawn in place with each `say` (a spinner before it, cut to the
 * width) and wiped by `clear`: what a command waits for while it waits, never left in its output.
 */
export function liveLine(out: Tty): { say(text: string): void; clear(): void } {
  let frame = 0;
  let shown = false;
  return {
    say(text) {
      const width = Math.max(20, (out.columns || 80) - 1);
      const line = `${SPINNER[frame++ % SPINNER.length]} ${text}`;
      out.write(CLEAR_LINE + (line.length > width ? `${line.slice(0, width - 1)}…` : line));
      shown = true;
    },
    clear() {
      if (shown) out.write(CLEAR_LINE);
      shown = false;
    },
  };
}
