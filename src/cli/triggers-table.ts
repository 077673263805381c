import * as v from 'valibot';
import { formatElapsed } from './progress-view.ts';
import { table } from './api-command.ts';
import { printableText } from './text-width.ts';

// The answer of GET /api/triggers as `svc triggers` reads it (fields it does not show are kept:
// `--json` prints the answer whole), and the table it prints of it.

const LastFire = v.looseObject({ fire_key: v.string(), execution_id: v.nullable(v.number()), at: v.string(), outcome: v.string() });

/** One trigger of the listing (GET /api/triggers), as pause and resume answer it too. */
export const TriggerItem = v.looseObject({
  path: v.string(),
  name: v.string(),
  kind: v.string(),
  state: v.string(),
  next_fires: v.array(v.string()),
  last_fire: v.nullable(LastFire),
  fires: v.number(),
  skipped: v.number(),
  errors: v.number(),
  last_error: v.optional(v.nullable(v.string())),
  subscription_problem: v.optional(v.nullable(v.looseObject({ message: v.string(), since: v.string() }))),
});
/** GET /api/triggers's answer. */
export const TriggerList = v.looseObject({ triggers: v.array(TriggerItem), count: v.number() });

export type TriggerItem = v.InferOutput<typeof TriggerItem>;

/** An ISO time to the second (`2026-01-01T02:00:00Z`), and how far it is from `now` ("in 3h04m", "12.0s ago"). */
export function whenText(iso: string, now: number): string {
  const t = Date.parse(iso);
  if (Number.isNaN(t)) return iso;
  const at = new Date(t).toISOString().replace(/\.000Z$/, 'Z');
  return t >= now ? `${at} (in ${formatElapsed(t - now)})` : `${at} (${formatElapsed(now - t)} ago)`;
}

/** What the last fire did: `#42 started 5m03s ago`, `skipped 2.0s ago` (no execution), `-` when never fired. */
function lastFireText(fire: TriggerItem['last_fire'], now: number): string {
  if (!fire) return '-';
  const t = Date.parse(fire.at);
  const age = Number.isNaN(t) ? fire.at : `${formatElapsed(Math.max(0, now - t))} ago`;
  return `${fire.execution_id === null ? '' : `#${fire.execution_id} `}${fire.outcome} ${age}`;
}

/** Longest last error the table's notes show (the whole one is in --json). */
const NOTE_CHARS = 200;

const noteText = (text: string) => {
  const one = printableText(text.replace(/\s+/g, ' '));
  return one.length > NOTE_CHARS ? `${one.slice(0, NOTE_CHARS - 1)}…` : one;
};

/**
 * The listing as a table: path, name, kind, state, next fire, last fire, fires/skipped/errors;
 * then, for each trigger with errors, its last error on a line of its own (why its fires were
 * refused: the counts alone do not say, and --json is not what a person reads), and for each NATS
 * trigger that is not consuming, why.
 */
export function triggersTable(triggers: readonly TriggerItem[], now = Date.now()): string {
  const notes = triggers.flatMap((t) => [
    ...(t.errors && t.last_error ? [`${t.path} ${t.name}: last error: ${noteText(t.last_error)}\n`] : []),
    ...(t.subscription_problem ? [`${t.path} ${t.name}: not consuming since ${whenText(t.subscription_problem.since, now)}: ${noteText(t.subscription_problem.message)}\n`] : []),
  ]);
  return tableOf(triggers, now) + (notes.length ? `\n${notes.join('')}` : '');
}

function tableOf(triggers: readonly TriggerItem[], now: number): string {
  return table([
    ['PATH', 'NAME', 'KIND', 'STATE', 'NEXT FIRE', 'LAST FIRE', 'FIRES/SKIPPED/ERRORS'],
    ...triggers.map((t) => [t.path, t.name, t.kind, t.state, t.next_fires[0] ? whenText(t.next_fires[0], now) : '-', lastFireText(t.last_fire, now), `${t.fires}/${t.skipped}/${t.errors}`]),
  ]);
}
