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
export type NodeFacts = { step: string; status: string; replayed: boolean; replayedFrom?: string; selected: boolean; loop?: string; progress?: string; held?: string };

/**
 * What a paused execution holds of a step (GET …/state `held`, `held_children`: its commands and
 * child starts decided while paused, issued once resumed): `held by the pause: 1 command, issued
 * once resumed`; undefined when it holds nothing. Active, yet nothing of it runs.
 */
export function heldText(held: number | undefined, children = 0): string | undefined {
  if (!held) return undefined;
  const count = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;
  const parts = [...(held - children ? [count(held - children, 'command')] : []), ...(children ? [count(children, 'child start')] : [])];
  return `held by the pause: ${parts.join(' and ')}, issued once resumed`;
}

/** The node's class: `node st-completed replayed selected`. */
export const nodeClass = (f: NodeFacts): string => `node st-${f.status}${f.replayed ? ' replayed' : ''}${f.held ? ' held' : ''}${f.selected ? ' selected' : ''}`;

/** Its accessible name: `step first, completed, replayed from the execution retried, loop…, 2/3 done`. */
export const nodeLabel = (f: NodeFacts): string =>
  `step ${f.step}${f.status !== 'none' ? `, ${f.status}` : ''}${f.held ? `, ${f.held}` : ''}${f.replayed ? `, ${f.replayedFrom ?? REPLAYED}` : ''}${f.loop ? `, ${f.loop}` : ''}${f.progress ? `, ${f.progress}` : ''}`;

/** Its tooltip: the whole name (a long one is cut on the box), that a retry replayed it, what the pause holds of it (heldText). */
export const nodeTitle = (name: string, replayed: boolean, replayedFrom: string = REPLAYED, held?: string): string => {
  const notes = [...(held ? [held] : []), ...(replayed ? [replayedFrom] : [])];
  return notes.length ? `${name} (${notes.join('; ')})` : name;
};
