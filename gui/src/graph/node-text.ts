// What a step's node of the execution graph says of itself (its class, its accessible label, its
// tooltip): pure, so that what a reader and a screen reader are told is checked without a browser.

/** A retry's step that took its recorded outcome: drawn completed, and said not to have run here. */
export const REPLAYED = 'replayed from the execution retried';

/** What one node shows: its status (`none` outside an execution), whether a retry replayed it, its loop and the loop's progress. */
export type NodeFacts = { step: string; status: string; replayed: boolean; selected: boolean; loop?: string; progress?: string };

/** The node's class: `node st-completed replayed selected`. */
export const nodeClass = (f: NodeFacts): string => `node st-${f.status}${f.replayed ? ' replayed' : ''}${f.selected ? ' selected' : ''}`;

/** Its accessible name: `step first, completed, replayed from the execution retried, loop…, 2/3 done`. */
export const nodeLabel = (f: NodeFacts): string =>
  `step ${f.step}${f.status !== 'none' ? `, ${f.status}` : ''}${f.replayed ? `, ${REPLAYED}` : ''}${f.loop ? `, ${f.loop}` : ''}${f.progress ? `, ${f.progress}` : ''}`;

/** Its tooltip: the whole name (a long one is cut on the box), and that a retry replayed it. */
export const nodeTitle = (name: string, replayed: boolean): string => (replayed ? `${name} (${REPLAYED})` : name);
