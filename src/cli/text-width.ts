// How many columns a terminal gives a text: a table padded by `.length` counts 東京 as 2 where a
// terminal shows 4, and every column after a CJK step name, path or limit key moved left.

// Unicode's East Asian Wide and Fullwidth characters (EastAsianWidth W and F, the blocks in use)
// and emoji shown as pictures: two columns each.
const WIDE =
  /[\u1100-\u115F\u231A\u231B\u2329\u232A\u2E80-\u303E\u3041-\u33FF\u3400-\u4DBF\u4E00-\u9FFF\uA000-\uA4CF\uA960-\uA97F\uAC00-\uD7A3\uF900-\uFAFF\uFE10-\uFE19\uFE30-\uFE6F\uFF00-\uFF60\uFFE0-\uFFE6\u{16FE0}-\u{18CFF}\u{1B000}-\u{1B2FF}\u{20000}-\u{3FFFD}]|\p{Emoji_Presentation}/u;
// A character cluster of only these takes no column (a zero-width space, a joiner, a stray mark).
const NO_WIDTH = /^[\p{Mn}\p{Me}\p{Cf}]+$/u;
const PLAIN = /^[\x20-\x7e]*$/;
// Made at the first text that is not plain ASCII: making one loads ICU's break rules, 15 ms of
// every `svc` command's start, and most tables are plain.
let segmenter: Intl.Segmenter | undefined;
const clustersOf = (text: string) => (segmenter ??= new Intl.Segmenter()).segment(text);

/** The columns `text` takes in a terminal: per user-perceived character, 2 when wide, 0 when it has no width, else 1. */
export function textWidth(text: string): number {
  if (PLAIN.test(text)) return text.length;
  let width = 0;
  for (const { segment } of clustersOf(text)) width += WIDE.test(segment) ? 2 : NO_WIDTH.test(segment) ? 0 : 1;
  return width;
}

/** `text` followed by spaces up to `width` columns (padEnd by columns, not UTF-16 units). */
export function padColumns(text: string, width: number): string {
  return text + ' '.repeat(Math.max(0, width - textWidth(text)));
}

// C0 and C1 control characters and DEL: a terminal acts on them (ESC colours, clears, moves the
// cursor; CR rewrites the line) and a newline or tab tears a table row.
const CONTROL = /\p{Cc}/gu;

/** `text` with its control characters written as escapes (`\n`, `\t`, `\u001b`), as JSON writes them: data shown to a person, never acted on by the terminal. */
export function printableText(text: string): string {
  return text.replace(CONTROL, (c) => {
    const json = JSON.stringify(c).slice(1, -1);
    return json !== c ? json : `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;
  });
}

/** `text` in at most `max` terminal columns: whole when it fits, else its start and its end around `…` (a path's name stays readable). */
export function middleCut(text: string, max: number): string {
  if (textWidth(text) <= max) return text;
  const chars = [...clustersOf(text)].map((s) => s.segment);
  let head = '';
  let tail = '';
  let room = max - 1;
  // Alternate ends, the start taking the odd column, while the next character of either still fits.
  for (let i = 0, j = chars.length - 1; i <= j; ) {
    const front = textWidth(chars[i]);
    const back = textWidth(chars[j]);
    if (textWidth(head) <= textWidth(tail) && front <= room) {
      head += chars[i++];
      room -= front;
    } else if (back <= room) {
      tail = chars[j--] + tail;
      room -= back;
    } else break;
  }
  return `${head}…${tail}`;
}

/** `text` in at most `max` terminal columns: whole when it fits, else its start and `…` (whole characters: a wide one, an emoji, is never split). */
export function endCut(text: string, max: number): string {
  if (textWidth(text) <= max) return text;
  let head = '';
  let room = max - 1;
  for (const { segment } of clustersOf(text)) {
    const width = textWidth(segment);
    if (width > room) break;
    head += segment;
    room -= width;
  }
  return `${head}…`;
}

/**
 * A line redrawn in place on a terminal `columns` wide: control characters escaped (a step name's
 * ESC never acts on the terminal) and cut to one row by columns: a longer one wraps, and each
 * redraw, which clears only the last row, leaves a row behind.
 */
export function terminalLine(text: string, columns: number | undefined): string {
  return endCut(printableText(text), Math.max(20, (columns || 80) - 1));
}
