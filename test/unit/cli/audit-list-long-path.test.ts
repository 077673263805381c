// `svc list` printed a playbook's path whole: one of 160 characters (paths may hold 512) pushed
// STATUS, STARTED, RUN TIME and PROGRESS of every row past column 160, off any terminal. A path
// wider than 60 columns now shows its start and its end around an ellipsis (the name at its end
// stays readable); `--json` has it whole.
import { describe, expect, it } from 'vitest';
import { executionsTable } from '../../../src/cli/executions-table.ts';
import { textWidth } from '../../../src/cli/text-width.ts';

const now = Date.parse('2026-12-01T08:00:00Z');
const item = (id: number, path: string) => ({ execution_id: id, path, status: 'completed', progress: 100, started_at: '2026-12-01T07:59:00Z', finished_at: '2026-12-01T07:59:01Z' });

describe('svc list: a long path', () => {
  it('is cut in its middle to 60 columns; a short one is whole', () => {
    const long = `audit/${'very_long_segment_'.repeat(8)}end`;
    const wide = `部署/${'東京支店'.repeat(20)}/終わり`;
    const lines = executionsTable([item(3, wide), item(2, long), item(1, 'examples/hello')], now).trimEnd().split('\n');
    const paths = lines.slice(1).map((l) => l.split(/ {2,}/)[1]);
    expect(paths[1]).toBe(`${long.slice(0, 30)}…${long.slice(-29)}`);
    expect(textWidth(paths[0])).toBeLessThanOrEqual(60);
    expect(paths[0]).toMatch(/^部署\/東京.*….*\/終わり$/);
    expect(textWidth(paths[1])).toBe(60);
    expect(paths[2]).toBe('examples/hello');
    for (const line of lines) expect(textWidth(line)).toBeLessThan(140);
  });
});
