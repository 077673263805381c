import * as v from 'valibot';
import { CHECK_NAMES, type CheckName } from './detection-checks.ts';
import type { Outcome } from './outcome.ts';
import { ownKeysRecord } from '../own-keys-record.ts';
import { printableText } from '../cli/text-width.ts';

// The readable form of an outcome (`svc doctor …` without --json): what is wrong, the first
// ids of each finding, and what to run next. The --json form is the outcome object itself.

const check = v.looseObject({
  severity: v.string(),
  summary: v.optional(v.string()),
  error: v.optional(v.string()),
  count: v.optional(v.number()),
  items: v.optional(v.array(ownKeysRecord(v.string(), v.unknown()))),
  execution_id: v.optional(v.number()),
  waiting: v.optional(v.looseObject({ count: v.number(), items: v.array(ownKeysRecord(v.string(), v.unknown())) })),
});
const detectData = v.looseObject({ checks: ownKeysRecord(v.string(), check) });
const reachabilityData = v.looseObject({
  api: v.looseObject({ status: v.string(), http_status: v.number(), latency_ms: v.number() }),
  database: v.looseObject({ status: v.string() }),
  bus: v.looseObject({ status: v.string() }),
});

const field = (item: Record<string, unknown>, key: string) => String(item[key] ?? '?');

/** What an execution waits for (stuck_executions' items and waiting items), in words. */
function waitText(item: Record<string, unknown>): string {
  const f = (key: string) => field(item, key);
  const until = item.until ? ` until ${f('until')}` : '';
  switch (item.waits_for) {
    case 'signal':
      return `a signal ${f('signal')}${item.until ? ` (timeout ${f('until')})` : ' (no timeout)'}`;
    case 'limit':
      return `room in limit ${f('limit_name')}`;
    case 'debounce':
      return `its debounce window${until}`;
    default:
      return `a timer${until}`;
  }
}

/** One line per listed item of a finding, by check. */
function itemLine(name: CheckName, item: Record<string, unknown>): string {
  const f = (key: string) => field(item, key);
  switch (name) {
    case 'stuck_executions':
      return `execution ${f('execution_id')} (${f('path')}): no progress for ${f('idle_minutes')} min, started ${f('started_at')}${item.reason && item.reason !== 'no_progress' ? `; ${f('reason')}: waited for ${waitText(item)}` : ''}`;
    case 'dead_worker_claims':
      return `command ${f('command_id')} of execution ${f('execution_id')} (step ${f('step')}, ${f('status')}): held by ${f('worker_id')}, ${f('reason')}, no heartbeat for ${f('silent_seconds')} s${item.paused === true ? '; its execution is paused: taken over once resumed' : ''}`;
    case 'stranded_pending_commands':
      return `command ${f('command_id')} of execution ${f('execution_id')} (step ${f('step')}): PENDING for ${f('waiting_seconds')} s`;
    case 'stale_worker_pools':
      return `pool ${f('name')} (${f('status')}): no heartbeat for ${f('silent_seconds')} s`;
  }
}

function detectLines(data: unknown): string[] {
  const parsed = v.safeParse(detectData, data);
  if (!parsed.success) return [];
  const lines: string[] = [];
  for (const name of CHECK_NAMES) {
    const c = parsed.output.checks[name];
    if (!c) continue;
    const text = c.error ? `${c.error}${c.execution_id ? ` (execution ${c.execution_id})` : ''}` : (c.summary ?? '');
    lines.push(`  ${c.severity.padEnd(8)}  ${name}: ${text}`);
    const items = c.items ?? [];
    for (const item of items) lines.push(`              ${itemLine(name, item)}`);
    if (c.count !== undefined && c.count > items.length) lines.push(`              … and ${c.count - items.length} more`);
    const waiting = c.waiting;
    if (waiting?.count) {
      for (const item of waiting.items) lines.push(`  waiting   execution ${field(item, 'execution_id')} (${field(item, 'path')}) waits for ${waitText(item)}`);
      if (waiting.count > waiting.items.length) lines.push(`              … and ${waiting.count - waiting.items.length} more waiting`);
    }
  }
  return lines;
}

function reachabilityLines(data: unknown): string[] {
  const parsed = v.safeParse(reachabilityData, data);
  if (!parsed.success) return [];
  const d = parsed.output;
  return [`  api       ${d.api.status} (HTTP ${d.api.http_status}, ${d.api.latency_ms} ms)`, `  database  ${d.database.status}`, `  bus       ${d.bus.status}`];
}

/** The outcome as text for a person: a headline, the summary, details, and the next commands. */
export function renderOutcome(o: Outcome): string {
  const server = typeof o.data.server === 'string' ? ` at ${o.data.server}` : '';
  const command = o.action === 'repair_trigger_reaper' ? 'repair' : o.action;
  const out = [`svc doctor ${command}: ${o.severity.toUpperCase()}${server}`, o.data.summary];
  const details = o.action === 'detect' ? detectLines(o.data) : o.action === 'reachability' && o.severity !== 'error' ? reachabilityLines(o.data) : [];
  if (details.length) out.push('', ...details);
  if (o.data.next_steps.length) out.push('', 'next:', ...o.data.next_steps.map((s) => `  ${s}`));
  // Lines quote data (a step's name, a path, a server's answer): its control characters are
  // written as escapes, never acted on by the terminal, as svc status and logs write them.
  return out.map(printableText).join('\n') + '\n';
}
