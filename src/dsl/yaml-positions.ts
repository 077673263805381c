import { EVENT_ID, getScalarValue, parseEvents, type Event } from 'js-yaml';
import { childPath } from './render.ts';

/** 1-based line and column in the YAML text. */
export type Position = { line: number; column: number };

type Frame = { kind: 'mapping' | 'sequence' | 'other'; path: string; index: number; key: string | undefined; expectKey: boolean };

/**
 * Where each path of a YAML document (`workflow[2].tool[0].kind`, as problems name them) starts:
 * a mapping entry at its key, a sequence item at its first character, the root (`$`) at 1:1.
 * Built from js-yaml's events, which carry source offsets; empty for text that does not parse.
 */
export function yamlPositions(text: string): Map<string, Position> {
  const positions = new Map<string, Position>();
  let events: Event[];
  try {
    events = parseEvents(text, {});
  } catch {
    return positions;
  }
  const lineStarts = [0];
  for (let i = 0; i < text.length; i++) if (text[i] === '\n') lineStarts.push(i + 1);
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
    if (event.type === EVENT_ID.MAPPING || event.type === EVENT_ID.SEQUENCE) {
      // A complex key (a collection as a key) or what is under it has no path of its own.
      const kind = isKey || path === undefined ? 'other' : event.type === EVENT_ID.MAPPING ? 'mapping' : 'sequence';
      stack.push({ kind, path: path ?? '', index: 0, key: undefined, expectKey: true });
    }
  }
  return positions;
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
