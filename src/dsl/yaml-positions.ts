import { EVENT_ID, getScalarValue, parseEvents, SCALAR_STYLE, type Event, type ScalarEvent } from 'js-yaml';
import type { Problem } from './reference-problems.ts';
import { childPath } from './render.ts';

/** A line break as YAML reads one: CRLF, LF, or a lone CR (js-yaml marks its errors by these lines too). */
const LINE_BREAK = /\r\n?|\n/g;

/** 1-based line and column in the YAML text. */
export type Position = { line: number; column: number };

/** Where a document's paths are: each path's start, and the text of each scalar value. */
type Layout = { starts: Map<string, Position>; scalars: Map<string, ScalarEvent>; at: (offset: number) => Position; text: string };

/**
 * Gives each problem without a place its line and column in `text`: where its path starts, or,
 * for a problem `within` a scalar value (a template's own line and column), that place in the
 * document when the value's text is its source as written (a literal block, a scalar without
 * escapes or folding). `within` itself is dropped: it is not part of a problem's answer.
 */
export function placeProblems(text: string, problems: readonly Problem[]): Problem[] {
  const layout = yamlLayout(text);
  return problems.map(({ within, ...problem }) => {
    if (problem.line !== undefined) return problem;
    const inValue = within && positionInScalar(layout, problem.path, within);
    return { ...problem, ...(inValue ?? positionOf(layout.starts, problem.path)) };
  });
}

/** The document position of `within` (a place in the value's text), when the value's source shows it as is. */
function positionInScalar(layout: Layout, path: string, within: Position): Position | undefined {
  const scalar = layout.scalars.get(path);
  if (!scalar) return undefined;
  // A value read as written (`fast`: no escapes, no folding) is its source; a literal block's
  // lines are its value's, each behind the block's indentation (js-yaml's `indent`, in columns).
  const skip = scalar.fast ? 0 : scalar.style === SCALAR_STYLE.LITERAL_BLOCK && scalar.indent >= 0 ? scalar.indent : undefined;
  if (skip === undefined) return undefined;
  const source = layout.text.slice(scalar.valueStart, scalar.valueEnd);
  const starts = [0, ...[...source.matchAll(LINE_BREAK)].map((m) => m.index + m[0].length)];
  const lineStart = starts[within.line - 1];
  if (lineStart === undefined) return undefined;
  const line = source.slice(lineStart, starts[within.line] ?? source.length).replace(/[\r\n]+$/, '');
  if (skip + within.column - 1 > line.length) return undefined;
  return layout.at(scalar.valueStart + lineStart + skip + within.column - 1);
}

type Frame = { kind: 'mapping' | 'sequence' | 'other'; path: string; index: number; key: string | undefined; expectKey: boolean };

/** Where each path of a YAML document starts (yamlLayout's `starts`). */
export function yamlPositions(text: string): Map<string, Position> {
  return yamlLayout(text).starts;
}

/**
 * Where each path of a YAML document (`workflow[2].tool[0].kind`, as problems name them) starts:
 * a mapping entry at its key, a sequence item at its first character, the root (`$`) at 1:1; and
 * each scalar value's event. Built from js-yaml's events, which carry source offsets; empty for
 * text that does not parse.
 */
function yamlLayout(text: string): Layout {
  const positions = new Map<string, Position>();
  const scalars = new Map<string, ScalarEvent>();
  // A byte order mark is in the text but no editor shows or counts it: line 1's columns begin after it.
  const lineStarts = [text.startsWith('\uFEFF') ? 1 : 0];
  for (const m of text.matchAll(LINE_BREAK)) lineStarts.push(m.index + m[0].length);
  const at = (offset: number): Position => {
    let lo = 0;
    let hi = lineStarts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (lineStarts[mid] <= offset) lo = mid;
      else hi = mid - 1;
    }
    return { line: lo + 1, column: offset - lineStarts[lo] + 1 };
  };
  const layout = { starts: positions, scalars, at, text };
  let events: Event[];
  try {
    events = parseEvents(text, {});
  } catch {
    return layout;
  }
  positions.set('$', { line: 1, column: 1 });
  const stack: Frame[] = [];
  for (const event of events) {
    if (event.type === EVENT_ID.DOCUMENT) {
      stack.push({ kind: 'other', path: '', index: 0, key: undefined, expectKey: false });
      continue;
    }
    if (event.type === EVENT_ID.POP) {
      stack.pop();
      continue;
    }
    const parent = stack.at(-1);
    const start = event.type === EVENT_ID.SCALAR ? startOfScalar(event.valueStart, event.style, event.anchorStart, event.tagStart) : event.type === EVENT_ID.ALIAS ? event.anchorStart - 1 : firstSet(event.anchorStart, event.tagStart, event.start);
    let path: string | undefined;
    let isKey = false;
    if (parent?.kind === 'sequence') {
      path = `${parent.path}[${parent.index++}]`;
      positions.set(path, at(start));
    } else if (parent?.kind === 'mapping') {
      if (parent.expectKey) {
        isKey = true;
        parent.expectKey = false;
        parent.key = event.type === EVENT_ID.SCALAR ? getScalarValue(text, event) : undefined;
        if (parent.key !== undefined) {
          const keyPath = parent.path === '' ? childPath('', parent.key) : childPath(parent.path, parent.key);
          if (!positions.has(keyPath)) positions.set(keyPath, at(start));
        }
      } else {
        parent.expectKey = true;
        if (parent.key !== undefined) path = childPath(parent.path, parent.key);
      }
    } else if (parent) {
      path = '';
    }
    if (event.type === EVENT_ID.SCALAR && !isKey && path !== undefined) scalars.set(path, event);
    if (event.type === EVENT_ID.MAPPING || event.type === EVENT_ID.SEQUENCE) {
      // A complex key (a collection as a key) or what is under it has no path of its own.
      const kind = isKey || path === undefined ? 'other' : event.type === EVENT_ID.MAPPING ? 'mapping' : 'sequence';
      stack.push({ kind, path: path ?? '', index: 0, key: undefined, expectKey: true });
    }
  }
  return layout;
}

/** The position of `path`, else of its nearest ancestor that has one, else 1:1. */
export function positionOf(positions: Map<string, Position>, path: string): Position {
  for (let p = path; p !== ''; p = parentPath(p)) {
    const found = positions.get(p);
    if (found) return found;
  }
  return positions.get('$') ?? { line: 1, column: 1 };
}

function parentPath(path: string): string {
  const match = /^(.*?)(\[(?:\d+|"(?:[^"\\]|\\.)*")\]|\.[A-Za-z_][A-Za-z0-9_]*)$/.exec(path);
  return match ? match[1] : '';
}

function firstSet(...offsets: number[]): number {
  return Math.max(0, Math.min(...offsets.filter((o) => o >= 0)));
}

// A quoted scalar's value starts after its quote; a tag or anchor comes before either.
function startOfScalar(valueStart: number, style: number, anchorStart: number, tagStart: number): number {
  const value = style === 2 || style === 3 ? valueStart - 1 : valueStart;
  return firstSet(anchorStart, tagStart, value);
}
