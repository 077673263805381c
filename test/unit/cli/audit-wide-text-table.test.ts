// svc's tables line their columns up in a terminal when a cell holds wide characters. They were
// padded by UTF-16 length: a step named 完了ステップ (6 characters, 12 columns) pushed the
// STATUS and DETAIL of its row 6 columns right of the header's in `svc status`, and the step and
// detail of `svc logs`, the keys of `svc limits show` (a tenant 東京支店) likewise.
import { describe, expect, it } from 'vitest';
import { table } from '../../../src/cli/api-command.ts';
import { Timeline } from '../../../src/cli/logs-view.ts';
import { padColumns, textWidth } from '../../../src/cli/text-width.ts';

/** The terminal column at which `word` starts in `line`. */
const columnOf = (line: string, word: string): number => textWidth(line.slice(0, line.indexOf(word)));

describe('text width in terminal columns', () => {
  it.each([
    ['ok', 2],
    ['東京支店', 8],
    ['完了ステップ', 12],
    ['ｆｕｌｌ', 8],
    ['한국어', 6],
    ['🚀 go', 5],
    ['👩‍💻', 2],
    ['e\u0301te\u0301', 3],
    ['a\u200bb', 2],
    ['Ærø', 3],
  ])('%j takes %i columns', (text, width) => {
    expect(textWidth(text)).toBe(width);
    expect(textWidth(padColumns(text, 14))).toBe(14);
  });

  it("a table's columns start at the same terminal column in every row", () => {
    const lines = table([
      ['STEP', 'STATUS', 'DETAIL'],
      ['準備', 'completed', 'ok'],
      ['完了ステップ', 'failed', 'error: exit_code'],
      ['report', 'pending', '-'],
    ]).split('\n');
    const at = columnOf(lines[0], 'STATUS');
    expect(columnOf(lines[1], 'completed')).toBe(at);
    expect(columnOf(lines[2], 'failed')).toBe(at);
    expect(columnOf(lines[3], 'pending')).toBe(at);
    expect(columnOf(lines[2], 'error')).toBe(columnOf(lines[0], 'DETAIL'));
  });

  it("svc logs' detail starts at the same column after a wide step name", () => {
    const t = new Timeline();
    const at = '2026-11-29T08:00:00.000Z';
    const header = t.header();
    const wide = t.line({ event_id: 2, event_type: 'step.exit', step: '完了ステップ', context: { status: 'ok' }, created_at: at });
    expect(columnOf(wide, 'ok')).toBe(columnOf(header, 'DETAIL'));
  });
});
