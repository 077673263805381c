import type { AdjacencyMap } from 'xstate/graph';

/**
 * Paths the simulation follows to their end: a parallel loop of n items has 2^n + 1 of them (each
 * item ok or error), each replayed; past this the report is `truncated` (registration's warnings
 * then say paths were not all checked), so a playbook cannot hold its registration for minutes.
 */
export const MAX_SIMULATED_PATHS = 512;
/** Events of all the paths followed together (each is replayed through the machine): past it, `truncated` too. */
export const MAX_SIMULATED_PATH_EVENTS = 5_000;

/**
 * Every simple path of `adjacency` from `start` to a state that offers no event (an end: done,
 * cut, undecided, or past the state budget), as its events, depth first; at most
 * MAX_SIMULATED_PATHS of them and MAX_SIMULATED_PATH_EVENTS events in all (`truncated` past it).
 * (xstate's getSimplePaths enumerates every simple path to every state, then this filtered the
 * ends: a parallel loop over 12 items, 4,097 paths, took 12 s, one over 80 minutes, on
 * registration's thread.)
 */
export function pathsToEnds<S, E>(adjacency: AdjacencyMap<S, E>, start: string, serializeState: (s: S) => string): { paths: E[][]; truncated: boolean } {
  const nodes = new Map(Object.entries(adjacency));
  // Each edge's target, serialized once (a state's text is its whole context).
  const edges = new Map<string, { event: E; to: string }[]>();
  const edgesOf = (key: string) => {
    let out = edges.get(key);
    if (!out) {
      const transitions: Record<string, { event: E; state: S }> = nodes.get(key)?.transitions ?? {};
      edges.set(key, (out = Object.values(transitions).map((t) => ({ event: t.event, to: serializeState(t.state) }))));
    }
    return out;
  };
  const paths: E[][] = [];
  const onPath = new Set<string>();
  const taken: E[] = [];
  let events = 0;
  let truncated = false;
  const walk = (key: string): void => {
    const out = edgesOf(key);
    if (out.length === 0) {
      if (paths.length >= MAX_SIMULATED_PATHS || events + taken.length > MAX_SIMULATED_PATH_EVENTS) truncated = true;
      else {
        paths.push([...taken]);
        events += taken.length;
      }
      return;
    }
    onPath.add(key);
    for (const { event, to } of out) {
      if (truncated) break;
      if (onPath.has(to)) continue;
      taken.push(event);
      walk(to);
      taken.pop();
    }
    onPath.delete(key);
  };
  walk(start);
  return { paths, truncated };
}
