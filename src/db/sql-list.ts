/** A parenthesised SQL list of constant words (statuses, kinds, event types) for fixed statement text: `('a', 'b')`. Only for constants of the code, never for input. */
export function sqlList(words: readonly string[]): string {
  for (const w of words) if (!/^[a-z_.]+$/.test(w)) throw new Error(`not a constant word: ${w}`);
  return `(${words.map((w) => `'${w}'`).join(', ')})`;
}
