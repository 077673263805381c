import type { ProgressChange, StepProgress } from './step-progress.ts';
import { printableText, terminalLine } from './text-width.ts';

/** How `svc run --wait` shows progress: lines for logs and pipes, one redrawn line on a terminal. */
export type ProgressView = {
  change(c: ProgressChange, progress: StepProgress, elapsedMs: number): void;
  /** The state may not have changed, but time passed (redraws the terminal line). */
  tick(progress: StepProgress, elapsedMs: number): void;
  note(text: string, elapsedMs: number): void;
  /** Removes the live line before final output. */
  clear(): void;
  /** Shows a running loop's items done (the watch then reads the step states, about once a second). */
  readonly showsLoops?: boolean;
};

type Out = { write(text: string): unknown; columns?: number };

const DAY_S = 86_400;
const YEAR_S = 365 * DAY_S;

/**
 * 0.4s, 12.3s, 2m05s, 1h02m, 3d04h, 2y017d: a timer a week or a year away reads as days or years,
 * not as 168h00m or 8760h00m.
 */
export function formatElapsed(ms: number): string {
  const s = ms / 1000;
  if (s < 60) return `${s.toFixed(1)}s`;
  const whole = Math.floor(s);
  const two = (n: number) => String(n).padStart(2, '0');
  if (whole < 3600) return `${Math.floor(whole / 60)}m${two(whole % 60)}s`;
  if (whole < DAY_S) return `${Math.floor(whole / 3600)}h${two(Math.floor((whole % 3600) / 60))}m`;
  if (whole < YEAR_S) return `${Math.floor(whole / DAY_S)}d${two(Math.floor((whole % DAY_S) / 3600))}h`;
  return `${Math.floor(whole / YEAR_S)}y${String(Math.floor((whole % YEAR_S) / DAY_S)).padStart(3, '0')}d`;
}

/** Prints nothing (for --json). */
export function silentView(): ProgressView {
  const nothing = () => {};
  return { change: nothing, tick: nothing, note: nothing, clear: nothing };
}

/** One line per change, prefixed with the elapsed time: `[0.6s] step start ok (1/3)`. */
export function lineView(out: Out): ProgressView {
  // A step's name is anyone's text: its control characters escaped, as every table writes them.
  const line = (ms: number, text: string) => out.write(`[${formatElapsed(ms)}] ${printableText(text)}\n`);
  return {
    change(c, progress, ms) {
      if (c.kind === 'enter') line(ms, `step ${c.step} started`);
      else line(ms, `step ${c.step} ${c.status} (${progress.counter})${c.message ? `: ${c.message}` : ''}`);
    },
    tick() {},
    note: (text, ms) => line(ms, text),
    clear() {},
  };
}

export const CLEAR_LINE = '\r\x1b[2K';
export const SPINNER = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

/** One status line redrawn in place (`\r` + clear line), cut to the terminal width (terminalLine). */
export function terminalView(out: Out): ProgressView {
  let frame = 0;
  let lastNote = '';
  const draw = (progress: StepProgress, ms: number) => {
    const now = progress.runningSteps;
    const parts = [
      `${SPINNER[frame++ % SPINNER.length]} running`,
      `${progress.counter} steps done`,
      now.length ? `now: ${now.map((step) => progress.runningText(step)).join(', ')}` : lastNote || 'waiting for a worker',
      formatElapsed(ms),
    ];
    out.write(CLEAR_LINE + terminalLine(parts.join('  ·  '), out.columns));
  };
  return {
    showsLoops: true,
    // Changes arrive in bursts (one poll's events); the line is drawn once per poll, on tick.
    change(c) {
      lastNote = c.kind === 'exit' && c.status !== 'ok' ? `step ${c.step} ${c.status}` : '';
    },
    tick: draw,
    // A note is a line of its own above the live one, whole: what a step waits for (and the
    // command that sends its signal), a pause, a queue. Cut to the width beside the steps running,
    // the line lost the part that matters; it also stands in the live line while no step runs.
    note(text) {
      out.write(`${CLEAR_LINE}${printableText(text)}\n`);
      lastNote = text;
    },
    clear() {
      out.write(CLEAR_LINE);
    },
  };
}
