/**
 * What one routing measured, for callers that ask (batch processing writes it into
 * `batch.completed`). Times are wall-clock milliseconds measured around the work they name; the
 * routing's one write statement persists events and saves state together, so the fields of each
 * part it carried report that statement's time.
 */
export type RouteProbe = {
  /** Waiting for a pooled connection. */
  pool_checkout_ms: number;
  /** Taking locks before the routing's work: none is taken (the one write's guard on what was read stands for locks), so 0. */
  lock_acquire_ms: number;
  /** Reading the executions and commands not held in memory and hydrating their machines. */
  state_load_ms: number;
  /** The transaction up to its commit: reads, folding every event, the write. */
  engine_total_ms: number;
  save_state_ms: number;
  save_state_calls: number;
  save_state_terminal_lightweight_ms: number;
  save_state_terminal_lightweight_calls: number;
  persist_event_compat_ms: number;
  persist_event_compat_calls: number;
  /** State writes a write per event would have made beyond the one per execution this routing made. */
  save_state_coalesced_count: number;
  commit_ms: number;
  /** engine_total_ms plus commit_ms. */
  transaction_ms: number;
  /** After the commit: publishing the committed state, waking executions that got inbox events. */
  issue_commands_ms: number;
  /** Per input event: commands issued while folding it. */
  commands_by_event: number[];
  /** Per input event: whether it reached a running execution's machine (not refused, late or a late arrival). */
  actionable_by_event: boolean[];
  /** The commands issued, with the input event whose folding issued them. */
  issued: { execution_id: number; seq: number; event: number }[];
};

/** A probe with every figure at zero, for routeEvents to fill. */
export function newRouteProbe(): RouteProbe {
  return {
    pool_checkout_ms: 0,
    lock_acquire_ms: 0,
    state_load_ms: 0,
    engine_total_ms: 0,
    save_state_ms: 0,
    save_state_calls: 0,
    save_state_terminal_lightweight_ms: 0,
    save_state_terminal_lightweight_calls: 0,
    persist_event_compat_ms: 0,
    persist_event_compat_calls: 0,
    save_state_coalesced_count: 0,
    commit_ms: 0,
    transaction_ms: 0,
    issue_commands_ms: 0,
    commands_by_event: [],
    actionable_by_event: [],
    issued: [],
  };
}
