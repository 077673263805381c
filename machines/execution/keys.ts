// The context's maps by number (pending commands by seq, runs by id, a run's iterations by item
// index) are keyed `#<n>`, never by the bare number: V8 backs an object whose keys are array
// indices below 1,024 with an array as long as the largest of them, so each copy-on-write copy of
// such a map (a transition copies those it changes) cost time and memory in proportion to the
// number, and a loop of 1,000 items O(n²) (docs/benchmarks.md). Object key order is the same:
// insertion order here, and jsonb (shorter keys first) gives the same order back.

/** A key of a map by number. */
export type NumberKey = `#${number}`;

/** The key of a seq, a run id or an item index. */
export const keyOf = (n: number): NumberKey => `#${n}`;

/** The number a key stands for. */
export const numberOf = (key: string): number => Number(key.slice(1));

/** A run's iterations: `-` for the single one of a plain step (or a wait), the item's key for a loop item. */
export type IterationKey = NumberKey | '-';

/** The key of an iteration: `index` null for a plain step's single one. */
export const iterationKey = (index: number | null): IterationKey => (index === null ? '-' : keyOf(index));
