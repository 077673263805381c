import * as v from 'valibot';
import { table } from './api-command.ts';
import { whenText } from './triggers-table.ts';

// The answers of /api/limits as `svc limits` reads them (fields it does not show are kept:
// `--json` prints the answer whole), and what it prints of them: the list's table, a limit's page
// with its keys, and a limit's parts in a line (`concurrency 2, rate 10/1s burst 5`).

const Rate = v.looseObject({ limit: v.number(), period_seconds: v.number(), burst: v.number() });

/** One limit of the listing (GET /api/limits), as PUT answers it too (with `created`). */
export const LimitItem = v.looseObject({
  name: v.string(),
  defined: v.boolean(),
  concurrency: v.nullable(v.number()),
  rate: v.nullable(Rate),
  created_at: v.nullable(v.string()),
  updated_at: v.nullable(v.string()),
  keys: v.number(),
  running: v.number(),
  queued: v.number(),
  waiting: v.number(),
});
/** GET /api/limits's answer. */
export const LimitList = v.looseObject({ limits: v.array(LimitItem), count: v.number() });
/** PUT /api/limits/{name}'s answer. */
export const LimitPut = v.looseObject({ ...LimitItem.entries, created: v.boolean() });

const KeyItem = v.looseObject({
  key: v.string(),
  running: v.number(),
  queued: v.number(),
  waiting: v.number(),
  tokens: v.nullable(v.number()),
  served_at: v.nullable(v.string()),
});
/** GET /api/limits/{name}'s answer: the limit and its keys, busiest first. */
export const LimitDetail = v.looseObject({ ...LimitItem.entries, key_list: v.array(KeyItem) });

export type LimitItem = v.InferOutput<typeof LimitItem>;
export type LimitDetail = v.InferOutput<typeof LimitDetail>;
type Rate = v.InferOutput<typeof Rate>;

const PERIOD_UNITS: readonly [string, number][] = [
  ['d', 86_400_000],
  ['h', 3_600_000],
  ['m', 60_000],
  ['s', 1000],
  ['ms', 1],
];

/** A period as the duration `--rate` takes: 1s, 1m, 1m30s, 500ms, 1d (to the millisecond). */
export function periodText(seconds: number): string {
  let ms = Math.round(seconds * 1000);
  if (ms <= 0) return `${seconds}s`;
  const parts: string[] = [];
  for (const [unit, size] of PERIOD_UNITS) {
    if (ms < size) continue;
    parts.push(`${Math.floor(ms / size)}${unit}`);
    ms %= size;
  }
  return parts.join('');
}

/** A rate as `--rate` and `--burst` set it: `10/1s burst 5`. */
export function rateText(rate: Rate): string {
  return `${rate.limit}/${periodText(rate.period_seconds)} burst ${rate.burst}`;
}

/** True for a playbook's inline limit (`concurrency: {limit: N}`), kept as `@<path>`: defined by its playbook, not by PUT. */
const isInline = (name: string) => name.startsWith('@');

/**
 * What a limit allows, in a line: `concurrency 2, rate 10/1s burst 5`; for a playbook's inline
 * limit its N (as the server answers it) and that its playbook sets it; `not defined` for a name
 * only playbooks use.
 */
export function limitPartsText(l: Pick<LimitItem, 'name' | 'defined' | 'concurrency' | 'rate'>): string {
  if (!l.defined && isInline(l.name)) return `${l.concurrency === null ? '' : `concurrency ${l.concurrency}, `}inline (its playbook sets it)`;
  if (!l.defined) return 'not defined (its work waits until it is)';
  return [l.concurrency === null ? '' : `concurrency ${l.concurrency}`, l.rate ? `rate ${rateText(l.rate)}` : ''].filter(Boolean).join(', ');
}

/** The concurrency column: N, `-` (none), `N (inline)` or `not defined`. */
function concurrencyCell(l: LimitItem): string {
  if (!l.defined && isInline(l.name)) return l.concurrency === null ? 'inline' : `${l.concurrency} (inline)`;
  if (!l.defined) return 'not defined';
  return l.concurrency === null ? '-' : String(l.concurrency);
}

/** The listing as a table: name, concurrency, rate, keys, running, queued, waiting. */
export function limitsTable(limits: readonly LimitItem[]): string {
  return table([
    ['NAME', 'CONCURRENCY', 'RATE', 'KEYS', 'RUNNING', 'QUEUED', 'WAITING'],
    ...limits.map((l) => [l.name, concurrencyCell(l), l.rate ? rateText(l.rate) : '-', String(l.keys), String(l.running), String(l.queued), String(l.waiting)]),
  ]);
}

// The empty key (a limit without `key:`) named as `svc status`, the console's timeline and its Waits-for panel name it.
const EMPTY_KEY = '(empty key)';

/** Tokens to the thousandth, `-` for a key of a limit without a rate. */
const tokensText = (tokens: number | null) => (tokens === null ? '-' : String(Math.round(tokens * 1000) / 1000));

/** A limit's page: what it allows, its totals, then a table of its keys (and a line when more keys than shown). */
export function limitText(d: LimitDetail, now = Date.now()): string {
  const rows: [string, string][] = [
    ['allows', limitPartsText(d)],
    ['keys', String(d.keys)],
    ['running', String(d.running)],
    ['queued', String(d.queued)],
    ['waiting', String(d.waiting)],
  ];
  if (d.updated_at) rows.push(['updated', whenText(d.updated_at, now)]);
  const width = Math.max(...rows.map(([k]) => k.length));
  const head = `limit ${d.name}\n${rows.map(([k, value]) => `  ${k.padEnd(width)}  ${value}`).join('\n')}\n`;
  if (d.key_list.length === 0) return `${head}\nno keys in use\n`;
  const keys = table([
    ['KEY', 'RUNNING', 'QUEUED', 'WAITING', 'TOKENS', 'LAST SERVED'],
    ...d.key_list.map((k) => [k.key === '' ? EMPTY_KEY : k.key, String(k.running), String(k.queued), String(k.waiting), tokensText(k.tokens), k.served_at ? whenText(k.served_at, now) : '-']),
  ]);
  const more = d.keys > d.key_list.length ? `${d.key_list.length} of ${d.keys} keys shown, busiest first: --keys N for more\n` : '';
  return `${head}\n${keys}${more}`;
}
