// `svc run --wait` printed step names raw in its progress: a step named "red\x1b[31mstep" coloured
// the terminal from its `[2.6s] step red… started` line on (piped to a file too), where `svc status`
// and `svc logs` write it `red\u001b[31mstep` (docs/cli.md: nothing from data colours or moves the
// terminal). And the live line on a terminal was cut by UTF-16 length, not columns: a step named
// in Japanese took twice the width, wrapped, and every redraw (which clears one row) left a row
// behind; a cut could split an emoji in two. Both now escape control characters and cut by columns.
import { describe, expect, it } from 'vitest';
import { liveLine } from '../../../src/cli/live-line.ts';
import { CLEAR_LINE, lineView, terminalView } from '../../../src/cli/progress-view.ts';
import { StepProgress } from '../../../src/cli/step-progress.ts';
import { textWidth } from '../../../src/cli/text-width.ts';
import { Capture } from '../../helpers/capture.ts';

const RED = 'red\x1b[31mstep\x1b[0m';
const WIDE = 'デプロイ準備の確認とステージング環境への配信を待つ長い名前のステップ';
const enter = (progress: StepProgress, step: string) => progress.apply({ event_id: 1, event_type: 'step.enter', step, created_at: '2026-12-01T00:00:00Z' });
/** What the terminal shows after the last redraw: the text after the last clear, without it. */
const lastDrawn = (text: string) => text.split(CLEAR_LINE).at(-1) ?? '';

describe('svc run --wait progress, a step name from data', () => {
  it('piped: its control characters escaped', () => {
    const out = new Capture();
    const view = lineView(out);
    const progress = new StepProgress(1);
    const change = enter(progress, RED);
    if (change) view.change(change, progress, 100);
    view.note(`step ${RED} waits for signal go`, 150);
    expect(out.text).not.toContain('\x1b');
    expect(out.text).toContain('step red\\u001b[31mstep\\u001b[0m started');
  });

  it('on a terminal: escaped, and cut to the width in columns, whole characters', () => {
    const out = Object.assign(new Capture(), { columns: 80 });
    const view = terminalView(out);
    const progress = new StepProgress(2);
    for (const step of [WIDE, RED]) {
      const change = enter(progress, step);
      if (change) view.change(change, progress, 100);
    }
    view.tick(progress, 200);
    const drawn = lastDrawn(out.text);
    expect(drawn).not.toContain('\x1b');
    expect(textWidth(drawn), drawn).toBeLessThanOrEqual(79);
    expect(drawn.endsWith('…')).toBe(true);
    view.note(`step ${RED} waits`, 300);
    expect(out.text.replaceAll(CLEAR_LINE, '')).not.toContain('\x1b');
  });

  it('a live line (svc doctor) is cut by columns and never splits an emoji', () => {
    const out = Object.assign(new Capture(), { columns: 30 });
    const line = liveLine(out);
    line.say(`a${'🚀'.repeat(40)}`);
    const drawn = lastDrawn(out.text);
    expect(textWidth(drawn)).toBeLessThanOrEqual(29);
    expect(drawn).toMatch(/^⠋ a(🚀)+…$/u);
    expect(drawn.isWellFormed()).toBe(true);
  });
});
