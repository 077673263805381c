// What a step's node of the execution graph says of itself (its class, its accessible label, its
// tooltip): pure, so that what a reader and a screen reader are told is checked without a browser.

/** A retry's step that took its recorded outcome: drawn completed, and said not to have run here. */
export const REPLAYED = 'replayed from the execution retried';

/**
 * Where the replayed steps of auto-resume's successor ran (GET /api/executions/{id}'s
 * `resumed_from`): there was no retry, so REPLAYED would contradict the API.
 */
export const replayedFromResumed = (resumedFrom: number): string => `replayed from execution ${resumedFrom}, which auto-resume restarted`;

/**
 * What one node shows: its status (`none` outside an execution), whether a retry (or auto-resume's
 * restart: `replayedFrom`, the words for where it ran, REPLAYED by default) replayed it, its loop and the loop's progress.
 */
export type NodeFacts = { step: string; status: string; replayed: boolean; replayedFrom?: string; selected: boolean; loop?: string; progress?: string };

/** The node's class: `node st-completed replayed selected`. */
export const nodeClass = (f: NodeFacts): string => `node st-${f.status}${f.replayed ? ' replayed' : ''}${f.selected ? ' selected' : ''}`;

/** Its accessible name: `step first, completed, replayed from the execution retried, loop…, 2/3 done`. */
export const nodeLabel = (f: NodeFacts): string =>
  `step ${f.step}${f.status !== 'none' ? `, ${f.status}` : ''}${f.replayed ? `, ${f.replayedFrom ?? REPLAYED}` : ''}${f.loop ? `, ${f.loop}` : ''}${f.progress ? `, ${f.progress}` : ''}`;

/** Its tooltip: the whole name (a long one is cut on the box), and that a retry replayed it. */
export const nodeTitle = (name: string, replayed: boolean, replayedFrom: string = REPLAYED): string => (replayed ? `${name} (${replayedFrom})` : name);
