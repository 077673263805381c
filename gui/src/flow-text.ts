// Flow control in words (pure): a limit's rate, a key, and what an execution's admission says it
// waits for or holds (GET /api/executions/{id} `flow`; DESIGN.md "Flow control").
import type { ExecutionFlow, LimitRate } from './api.ts';

/** A playbook's inline `concurrency: {limit: N}` is listed under `@<path>`, a name no PUT can make. */
export const isInlineLimit = (name: string): boolean => name.startsWith('@');

/** "10 / 1 s, burst 5"; "—" without a rate. */
export function rateText(rate: LimitRate | null): string {
  if (!rate) return '—';
  return `${rate.limit} / ${rate.period_seconds} s, burst ${rate.burst}`;
}

/** Tokens in a key's bucket, to a tenth ("—" without a rate). */
export const tokensText = (tokens: number | null): string => (tokens === null ? '—' : String(Math.round(tokens * 10) / 10));

/** A key as shown: the empty key (no `key:` template, or one that rendered to nothing) named so. */
export const keyText = (key: string): string => (key === '' ? '(empty key)' : key);

/**
 * Where an admission is: `debounced` (its debounce window is open at `now`), `queued` (waiting for
 * room on its limit's key, or to be admitted once its window closed) or `admitted` (holding a slot
 * of its key, or let through).
 */
export function flowState(flow: ExecutionFlow, now: number = Date.now()): 'debounced' | 'queued' | 'admitted' {
  if (flow.admitted_at) return 'admitted';
  return flow.not_before !== null && Date.parse(flow.not_before) > now ? 'debounced' : 'queued';
}

/** Said beside a limit named but not defined (`defined: false`): nothing frees room on it, its work waits until one is defined. */
export const NOT_DEFINED_TEXT = 'not defined: its work waits until a limit of this name is';
