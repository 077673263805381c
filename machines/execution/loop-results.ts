// A loop's per-item results, kept in chunks: recording one item's result copies one chunk and
// the list of chunks, not the whole list (a snapshot is never changed in place, and a loop of
// thousands of items would otherwise copy every result at every item).

/** Items per chunk. */
const RESULT_CHUNK_ITEMS = 128;

/** Results of a loop of `n` items, all null. */
export function emptyResults(n: number): unknown[][] {
  return Array.from({ length: Math.ceil(n / RESULT_CHUNK_ITEMS) }, (_, i) => new Array(Math.min(RESULT_CHUNK_ITEMS, n - i * RESULT_CHUNK_ITEMS)).fill(null));
}

/** The results with item `index` set (a new list; the given one is unchanged). */
export function withResult(chunks: unknown[][], index: number, value: unknown): unknown[][] {
  const c = Math.floor(index / RESULT_CHUNK_ITEMS);
  const out = [...chunks];
  out[c] = [...chunks[c]];
  out[c][index % RESULT_CHUNK_ITEMS] = value;
  return out;
}

/** The results in item order. */
export function resultList(chunks: unknown[][]): unknown[] {
  return chunks.flat();
}
