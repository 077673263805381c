import type { FastifyInstance } from 'fastify';
import * as v from 'valibot';
import type { AppDeps } from '../app-deps.ts';
import { deleteLimit, getLimit, limitKeys, limitsUsed, limitTotals, listLimits, putLimit, type FlowLimit, type LimitUse } from '../db/flow.repo.ts';
import { notFound, ServiceError } from '../errors.ts';
import { inlineLimitName, LIMIT_NAME, LIMIT_NAME_RULE } from '../flow/limit-name.ts';
import { MAX_PERIOD_SECONDS, MIN_PERIOD_SECONDS, WHOLE_MS_RULE, wholeMs } from '../flow/rate-period.ts';
import { integer, responses, time } from './answers.ts';
import { exactObject, integerIn, integerText, jsonSchema } from './validation.ts';

// Named limits (DESIGN.md "Flow control"): what playbooks' `concurrency.limit` and tasks'
// `limit.name` name, shared by every playbook and every server. A key's counters live in
// core.flow_key; the claim and the admitter enforce them (src/db/command-plans.ts, src/flow/).

const MAX_CONCURRENCY = 100_000;
const KEYS_SHOWN_DEFAULT = 100;
const KEYS_SHOWN_MAX = 1000;

// A limit's name, or a playbook's inline limit (`@<path>`, its path URL-encoded), which can be
// looked at, not set: PUT and DELETE take its name here and answer that its playbook holds it
// (inlineLimitRefusal), which a refusal of the name's form would not say.
const nameParams = v.object({ name: v.pipe(v.string(), v.check((n) => LIMIT_NAME.test(n) || (n.startsWith('@') && n.length > 1 && n.length <= 1000), `${LIMIT_NAME_RULE}, or @<path> for a playbook's inline limit`)) });

/** The 409 of a PUT or DELETE of a playbook's inline limit `name` (`@<path>`), or undefined for a named limit. */
function inlineLimitRefusal(name: string, verb: 'set' | 'deleted'): ServiceError | undefined {
  if (!name.startsWith('@')) return undefined;
  const path = name.slice(1);
  const message = `limit ${name} is the inline limit of playbook ${path} (its concurrency: {limit: N}): its playbook holds it, so it is not ${verb} here; change the playbook's concurrency, or PUT a named limit and name it there`;
  return new ServiceError('inline_limit', { message, errors: [`name: ${name} is held by playbook ${path}`] });
}
// The body and its rate take no other field: a PUT replaces the whole limit, so a misspelt part
// (`rates`, `brust`) would be dropped and what it meant to keep removed.
const rateBody = exactObject({
  limit: v.pipe(integerIn(1, MAX_CONCURRENCY), v.description('tokens per period: at most this many per `period_seconds` per key')),
  period_seconds: v.pipe(v.number('must be a number of seconds'), v.minValue(MIN_PERIOD_SECONDS, `must be at least ${MIN_PERIOD_SECONDS} (a millisecond)`), v.maxValue(MAX_PERIOD_SECONDS, `must be at most ${MAX_PERIOD_SECONDS}`), v.check((s) => s < MIN_PERIOD_SECONDS || wholeMs(s * 1000) !== undefined, WHOLE_MS_RULE)),
  burst: v.optional(v.pipe(integerIn(1, MAX_CONCURRENCY), v.description('the most a key\'s bucket holds (taken at once after a quiet time); `limit` when absent'))),
});
const putBody = v.pipe(
  exactObject({
    concurrency: v.optional(v.pipe(integerIn(1, MAX_CONCURRENCY), v.description('at most this many running at once per key'))),
    rate: v.optional(rateBody),
  }),
  v.check((b) => b.concurrency !== undefined || b.rate !== undefined, 'concurrency: a limit needs concurrency, rate or both'),
);
const keysQuery = exactObject({ keys: v.optional(integerText(1, KEYS_SHOWN_MAX)) });

const rateAnswer = v.nullable(v.object({ limit: integer, period_seconds: v.number(), burst: integer }));
const limitAnswer = v.object({
  name: v.string(),
  defined: v.pipe(v.boolean(), v.description('false: named by playbooks but not defined (its work waits until it is), or a playbook\'s inline limit (@<path>)')),
  concurrency: v.nullable(integer),
  rate: rateAnswer,
  created_at: v.nullable(time),
  updated_at: v.nullable(time),
  keys: v.pipe(integer, v.description('keys in use')),
  running: v.pipe(integer, v.description('slots held over every key: claimed commands and admitted executions')),
  queued: v.pipe(integer, v.description('executions queued for admission')),
  waiting: v.pipe(integer, v.description('commands waiting for room')),
});
const keyAnswer = v.object({
  key: v.string(),
  running: integer,
  queued: integer,
  waiting: integer,
  tokens: v.pipe(v.nullable(v.number()), v.description('tokens in the key\'s bucket now (null: no rate)')),
  served_at: v.nullable(time),
});
const limitDetailAnswer = v.object({ ...limitAnswer.entries, key_list: v.array(keyAnswer) });

type Totals = { keys: number; running: number; queued: number; waiting: number; capacity: number | null };
const NONE: Totals = { keys: 0, running: 0, queued: 0, waiting: 0, capacity: null };

/**
 * The names the newest playbooks use, each with its inline N (null for a named limit): listed
 * before any work waits on them, so a name nobody defined shows before its work is stuck on it.
 */
function usedNames(used: readonly LimitUse[]): Map<string, number | null> {
  return new Map(used.map((u) => (u.name === null ? [inlineLimitName(u.inline_path), u.capacity] : [u.name, null])));
}

/**
 * A limit as answered; an inline one (`@<path>`, not defined) shows its N as its concurrency: its
 * keys' (what they were admitted with), or its playbook's newest (`inline`) while it has no key.
 */
function present(name: string, l: FlowLimit | undefined, { capacity, ...t }: Totals, inline: number | null = null) {
  return {
    name,
    defined: l !== undefined,
    concurrency: l?.concurrency ?? capacity ?? inline,
    rate: l?.rate ?? null,
    created_at: l?.created_at.toISOString() ?? null,
    updated_at: l?.updated_at.toISOString() ?? null,
    ...t,
  };
}

/** PUT, GET and DELETE of named limits, and what each key holds. */
export async function limitRoutes(app: FastifyInstance, deps: AppDeps): Promise<void> {
  app.put('/api/limits/:name', { schema: { tags: ['limits'], summary: 'Create or replace a named limit (concurrency and/or rate per key)', params: jsonSchema(nameParams), body: jsonSchema(putBody), response: responses({ 200: v.object({ ...limitAnswer.entries, created: v.boolean() }) }) }, config: { access: { level: 'operator' } } }, async (req) => {
    const { name } = req.params as v.InferOutput<typeof nameParams>;
    const inline = inlineLimitRefusal(name, 'set');
    if (inline) throw inline;
    const b = req.body as v.InferOutput<typeof putBody>;
    const rate = b.rate ? { limit: b.rate.limit, period_seconds: b.rate.period_seconds, burst: b.rate.burst ?? b.rate.limit } : null;
    const { limit, created } = await putLimit(deps.db, name, b.concurrency ?? null, rate);
    // A larger limit may have room now: claimers of every server look again, and this server's
    // admitter at once where it knows of queued executions (others within their second).
    await deps.bus.publish(0, false);
    deps.flowClock?.freed();
    const totals = (await limitTotals(deps.db)).get(name) ?? NONE;
    return { ...present(name, limit, totals), created };
  });

  app.get('/api/limits', { schema: { tags: ['limits'], summary: 'Every limit: defined ones, names playbooks use that are not, and playbooks\' inline limits (@<path>)', response: responses({ 200: v.object({ limits: v.array(limitAnswer), count: integer }) }) }, config: { access: { level: 'viewer' } } }, async () => {
    const [limits, totals, used] = await Promise.all([listLimits(deps.db), limitTotals(deps.db), limitsUsed(deps.db)]);
    const byName = new Map(limits.map((l) => [l.name, l]));
    // Names playbooks use (defined or not) and their inline limits (`@<path>`) show too, whether
    // work waits on them or not: a misspelt name shows before its work is stuck on it.
    const usedAs = usedNames(used);
    const names = [...new Set([...byName.keys(), ...totals.keys(), ...usedAs.keys()])].sort();
    const out = names.map((n) => present(n, byName.get(n), totals.get(n) ?? NONE, usedAs.get(n)));
    return { limits: out, count: out.length };
  });

  app.get('/api/limits/:name', { schema: { tags: ['limits'], summary: 'A limit and what each of its keys holds: running, queued, waiting, tokens; the busiest keys first (running, queued and waiting together)', params: jsonSchema(nameParams), querystring: jsonSchema(keysQuery), response: responses({ 200: limitDetailAnswer }) }, config: { access: { level: 'viewer' } } }, async (req) => {
    const { name } = req.params as v.InferOutput<typeof nameParams>;
    const { keys } = req.query as v.InferOutput<typeof keysQuery>;
    const [limit, totals, list, used] = await Promise.all([getLimit(deps.db, name), limitTotals(deps.db), limitKeys(deps.db, name, keys ?? KEYS_SHOWN_DEFAULT), limitsUsed(deps.db)]);
    // A name a playbook uses is known, defined or not, with no key yet or not: 404 only for neither.
    const usedAs = usedNames(used);
    if (!limit && !list.length && !usedAs.has(name)) throw notFound(`limit ${name}`);
    return {
      ...present(name, limit, totals.get(name) ?? NONE, usedAs.get(name)),
      key_list: list.map((k) => ({ ...k, tokens: k.tokens === null ? null : Math.round(k.tokens * 1000) / 1000, served_at: k.served_at?.toISOString() ?? null })),
    };
  });

  app.delete('/api/limits/:name', { schema: { tags: ['limits'], summary: 'Delete a named limit whose keys are idle', params: jsonSchema(nameParams), response: responses({ 200: v.object({ status: v.literal('deleted'), name: v.string() }) }) }, config: { access: { level: 'operator' } } }, async (req) => {
    const { name } = req.params as v.InferOutput<typeof nameParams>;
    const inline = inlineLimitRefusal(name, 'deleted');
    if (inline) throw inline;
    const r = await deleteLimit(deps.db, name);
    if (r.deleted) return { status: 'deleted', name } as const;
    if (r.inUse && (await getLimit(deps.db, name))) {
      throw new ServiceError('limit_in_use', { code: 'limit_in_use', message: `limit ${name} holds, queues or has work waiting; delete it once its keys are idle` });
    }
    throw notFound(`limit ${name}`);
  });
}
