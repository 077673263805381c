import { EVENT_ID, parseEvents, YAMLException } from 'js-yaml';
import { secondDocument } from './second-document.ts';
import type { Position } from './yaml-positions.ts';

// js-yaml's reason for a collection used as a mapping key (`? [a, b]`, `{a: 1}: x`).
const COMPLEX_KEY = 'complex keys';

/**
 * Where a YAML text that `load` refused is wrong: the error's mark, except where js-yaml's is
 * useless: a complex key is marked at the document's start (its key position is not kept for a
 * collection), so the first collection used as a key is found; a second document has no mark.
 */
export function yamlErrorAt(text: string, error: unknown): Position | undefined {
  if (!(error instanceof YAMLException)) return undefined;
  if (!error.mark) return secondDocument(text);
  if (error.reason.includes(COMPLEX_KEY)) {
    const found = firstComplexKey(text);
    if (found) return found;
  }
  return { line: error.mark.line + 1, column: error.mark.column + 1 };
}

/** The start of the first mapping or sequence that is a mapping's key; undefined when none (or the text does not parse). */
function firstComplexKey(text: string): Position | undefined {
  let events;
  try {
    events = parseEvents(text, {});
  } catch {
    return undefined;
  }
  // For each open collection: whether it is a mapping whose next node is a key.
  const stack: { mapping: boolean; expectKey: boolean }[] = [];
  for (const event of events) {
    if (event.type === EVENT_ID.POP) {
      stack.pop();
      continue;
    }
    if (event.type === EVENT_ID.DOCUMENT) {
      stack.push({ mapping: false, expectKey: false });
      continue;
    }
    const parent = stack.at(-1);
    const isKey = Boolean(parent?.mapping && parent.expectKey);
    if (parent?.mapping) parent.expectKey = !parent.expectKey;
    if (event.type === EVENT_ID.MAPPING || event.type === EVENT_ID.SEQUENCE) {
      if (isKey) {
        const before = text.slice(0, event.start);
        return { line: before.split('\n').length, column: event.start - (before.lastIndexOf('\n') + 1) + 1 };
      }
      stack.push({ mapping: event.type === EVENT_ID.MAPPING, expectKey: true });
    }
  }
  return undefined;
}
