// On a terminal `svc run --wait` redraws one line cut to the terminal's width, and its notes
// stood in that line: `step approve waits for signal approval (roles admin), times out at …:
// svc signal 7 approval --data JSON` showed as `now: approve, step approve waits for signal app…`
// on 80 columns, the command to send the signal cut off (and a queue's note only while no step
// ran). A note is now printed whole on a line of its own above the live line, as piped output
// prints it; the live line still shows it while no step runs.
import { describe, expect, it } from 'vitest';
import { CLEAR_LINE, terminalView } from '../../../src/cli/progress-view.ts';
import { StepProgress } from '../../../src/cli/step-progress.ts';
import { Capture } from '../../helpers/capture.ts';

const NOTE = 'step approve waits for signal approval (roles admin), times out at 2026-12-01T18:00:00.000Z: svc signal 7 approval --data JSON';

describe('svc run --wait on a terminal', () => {
  it('prints a note whole on its own line, then redraws the live line cut to the width', () => {
    const out = Object.assign(new Capture(), { columns: 80 });
    const view = terminalView(out);
    const progress = new StepProgress(3);
    const enter = progress.apply({ event_id: 1, event_type: 'step.enter', step: 'approve', created_at: '2026-12-01T00:00:00Z' });
    if (enter) view.change(enter, progress, 100);
    view.note(NOTE, 100);
    view.tick(progress, 200);
    expect(out.text).toContain(`${CLEAR_LINE}${NOTE}\n`);
    const live = out.text.split(CLEAR_LINE).at(-1) ?? '';
    expect(live).toMatch(/^⠋ running {2}· {2}0\/3 steps done {2}· {2}now: approve {2}· {2}0\.2s$/);
  });

  it('shows the note in the live line while no step runs', () => {
    const out = Object.assign(new Capture(), { columns: 200 });
    const view = terminalView(out);
    view.note('queued on limit tenant key "acme": no step runs until it is admitted', 50);
    view.tick(new StepProgress(3), 60);
    expect(out.text.split(CLEAR_LINE).at(-1)).toContain('·  queued on limit tenant key "acme": no step runs until it is admitted  ·');
  });
});
