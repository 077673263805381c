/**
 * A statement parameter hidden from the planner by a sub-select: `(SELECT $n::type)::type`. A plan
 * made for the parameter's value (a custom plan) cannot specialise on it, so PostgreSQL settles on
 * one generic plan instead of planning again on every call: where planning costs more than
 * running, or where a value would prune core.event's ranges at planning and so always make the
 * custom plan look cheaper. Ranges are then pruned while the statement runs.
 */
export function opaque(param: string, type: string): string {
  return `(SELECT ${param}::${type})::${type}`;
}
