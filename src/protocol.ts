// The wire between the server and its workers: what the API hands a worker (a claimed command, a
// credential) and what a worker sends back (events, claims, heartbeats). The server (src/api,
// actors/) and the worker (src/worker) both import these shapes from here, so neither imports the
// other. Types and constants only: no behaviour, no I/O (test/unit/layering.test.ts holds it so).
import type { CommandStatus } from '../machines/command.machine.ts';
import type { ReportRefusalCode } from '../machines/error-codes.ts';

/** An event as it enters the engine: reported by a worker, or made by the engine itself (children's results). */
export type EventInput = {
  event_type: string;
  step?: string | null;
  command_id?: number | null;
  worker_id?: string | null;
  context?: unknown;
  result?: unknown;
  error?: unknown;
};

/**
 * An event addressed to an execution; `attempt` (from the claim) fences reports from stale
 * claimers. `report_id`: the worker report it came in, set by the server from the request (never
 * read from an event: the input schema has no such field), by which a report sent again is known.
 */
export type RoutedEvent = EventInput & { execution_id: number; attempt?: number | null; report_id?: string };

/** What routing made of one event, in the order sent: its id, or why it was not recorded (machines/error-codes.ts). */
export type EventResult =
  | { event_id: number }
  | { event_id: null; error: ReportRefusalCode; detail: string };

/** A claimed command as a worker receives it: what to run and the context to render it with. */
export type PresentedCommand = {
  command_id: number;
  execution_id: number;
  catalog_id: number;
  path: string | null;
  step: string;
  seq: number;
  loop_index: number | null;
  status: CommandStatus;
  attempt: number;
  worker_id: string | null;
  tasks: unknown[];
  context: unknown;
  keychain: unknown[];
};

/**
 * POST /api/worker/claim: up to `max` commands, waiting up to `wait_ms` for one. `request_id`
 * names the claim; sent again with `retry` after a lost answer, it gets back what it claimed.
 */
export type ClaimRequest = { worker_id: string; request_id?: string; retry?: boolean; max?: number; wait_ms?: number };

/** The answer to a claim (none when nothing came within `wait_ms`). */
export type ClaimAnswer = { commands: PresentedCommand[] };

/** POST /api/worker/report: a pool's events in one transaction, and `claim` more commands with it (claim-ahead). */
export type ReportRequest = { worker_id: string; report_id?: string; retry?: boolean; events: RoutedEvent[]; claim?: number };

/** `results` line up with the request's `events`; `commands` are the ones claimed with the report. */
export type ReportAnswer = { status: 'ok'; results: EventResult[]; commands_generated: number; commands: PresentedCommand[] };

/** POST /api/worker/pool/heartbeat: `running` lists every command the pool holds (absent: it does not say). */
export type HeartbeatRequest = { name: string; status?: 'ready' | 'draining'; running?: number[] };

/** `cancelled`: those of the pool's running commands that were cancelled, to stop; `superseded`: those another claim took over, to stop too. */
export type HeartbeatAnswer = { status: 'ok'; name: string; cancelled: number[]; superseded: number[] };

/**
 * Headers a worker sends with every secret it fetches (credential data, keychain entries, secret
 * handles): the command it fetches for and its claim (attempt, worker). With the worker token the
 * server answers only for a command that claim still holds and whose tasks name the secret.
 */
export const CLAIM_HEADERS = { command: 'x-svc-command', attempt: 'x-svc-attempt', worker: 'x-svc-worker' } as const;

/** A credential as a worker fetches it (GET /api/credentials/{name}?include_data=true) and hands it to a tool. */
export type ResolvedCredential = { name: string; type: string; data: Record<string, unknown> };

/** The longest `reason` a cancel, a pause or a resume takes (the API's bound; `svc` checks it before sending). */
export const MAX_CONTROL_REASON_CHARS = 1000;
