import { EVENT_ID, parseEvents, type Event } from 'js-yaml';

/** 1-based line and column in the YAML text. */
type Position = { line: number; column: number };

// A document marker: `---` at the start of a line, then a space, a tab or the line's end.
const MARKER = /^---(?=[ \t\r\n]|$)/gm;

/**
 * Where the second document of a YAML stream starts: its `---` line, else (after a `...`) its
 * first node; undefined when the text holds one document or does not parse. js-yaml's "expected a
 * single document" error has no mark, and a problem at 1:1 pointed at the document that is fine.
 */
export function secondDocument(text: string): Position | undefined {
  let events: Event[];
  try {
    events = parseEvents(text, {});
  } catch {
    return undefined;
  }
  const documents = events.flatMap((event, index) => (event.type === EVENT_ID.DOCUMENT ? [{ event, index }] : []));
  if (documents.length < 2) return undefined;
  const [first, second] = documents;
  let offset: number | undefined;
  if (second.event.type === EVENT_ID.DOCUMENT && second.event.explicitStart) {
    // Each document that starts with `---` takes the next marker line, in order.
    const markers = [...text.matchAll(MARKER)].map((m) => m.index);
    offset = markers[first.event.type === EVENT_ID.DOCUMENT && first.event.explicitStart ? 1 : 0];
  } else {
    const node = events[second.index + 1];
    offset = node === undefined ? undefined : node.type === EVENT_ID.SCALAR ? node.valueStart : node.type === EVENT_ID.MAPPING || node.type === EVENT_ID.SEQUENCE ? node.start : undefined;
  }
  if (offset === undefined || offset < 0) return undefined;
  const before = text.slice(0, offset);
  const line = before.split('\n').length;
  return { line, column: offset - (before.lastIndexOf('\n') + 1) + 1 };
}
