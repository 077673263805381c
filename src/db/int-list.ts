/** Checked non-negative integers as SQL text, for parameterless statements (ids, counts); throws on anything else. */
export function intList(ids: readonly number[]): string {
  for (const id of ids) if (!Number.isSafeInteger(id) || id < 0) throw new Error(`not an id: ${id}`);
  return ids.join(',');
}
