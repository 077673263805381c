import type { TaskError } from './execution/types.ts';
import type { Undecided } from './simulation-data.ts';

// The shapes of registration's simulated paths, apart from the simulator: the structural checks
// that answer without it (step-cycle-problem.ts) give the same shape.

/** How a path's command ended (paths explore failures without a code). */
export type Outcome = 'ok' | 'error' | 'timeout';

/** `error`: a failed path's, as the execution would end with it (its code and step). */
export type SimulatedPath = { status: string; path: string[]; outcomes: { step: string; outcome: Outcome }[]; cut: boolean; undecided?: Undecided; error?: TaskError & { step?: string } };
/**
 * `unreachable`: steps no path enters, certain only when no path depends on data; otherwise the
 * steps no path entered are `depends_on_data` (a run with other results may reach them). When a
 * path was cut, a step some chain of arcs leads to is in neither (it may lie past the cut).
 */
export type PathsReport = { paths: SimulatedPath[]; unreachable: string[]; depends_on_data: string[]; truncated: boolean };
