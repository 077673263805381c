import * as v from 'valibot';

/**
 * A worker's or pool's name (`worker_id`, a pool's `name`), as pool lists, claims and logs show
 * it: a blank one (`"   "`) or one holding a control character (a newline, an ESC) names no one a
 * reader can tell apart or read safely, as a trigger's blank `fire_key` names no fire.
 */
export const workerName = v.pipe(
  v.string(),
  v.maxLength(200),
  v.check((name) => name.trim() !== '', 'must not be blank'),
  v.regex(/^\P{Cc}*$/u, 'must not hold control characters'),
);
