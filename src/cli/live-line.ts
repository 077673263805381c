import { CLEAR_LINE, SPINNER } from './progress-view.ts';
import { terminalLine } from './text-width.ts';

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
      out.write(CLEAR_LINE + terminalLine(`${SPINNER[frame++ % SPINNER.length]} ${text}`, out.columns));
      shown = true;
    },
    clear() {
      if (shown) out.write(CLEAR_LINE);
      shown = false;
    },
  };
}
