// What a unit of work hands the traces after its commit (actors/route-events.ts and
// actors/start-execution.ts: `deps.traces?.committed(done.folded)`), as shapes only, so that
// actors/ and this folder do not import each other's modules. The fold's `Folded` is one of these.

/** An event the unit appended to a held execution's log, with the id it took. */
export type CommittedEvent = {
  readonly execution_id: number;
  readonly event_id: number;
  readonly event_type: string;
  readonly step: string | null;
  readonly context: unknown;
  readonly error: unknown;
  /** In the log as read back (events the traces read to catch up): when it was written. */
  readonly created_at?: string;
};

/** An event delivered to an execution outside the unit (a child's end to its parent, a cancel to a child). */
export type DeliveredEvent = { readonly executionId: number; readonly event: { readonly event_type: string; readonly step?: string | null; readonly context?: unknown; readonly error?: unknown } };

/** What the machine's context says after the unit (the runs still going, what each seq waits for), keyed as machines/execution/keys.ts says. */
export type HeldContext = {
  readonly nextRun: number;
  readonly runs: Readonly<Record<string, unknown>>;
  readonly pending: Readonly<Record<string, { readonly run: number }>>;
};

/** A held execution as the unit left it. */
export type HeldExecution = {
  readonly id: number;
  readonly status: string;
  readonly row: { readonly path: string; readonly root_execution_id: number; readonly parent_execution_id: number | null };
  readonly snapshot: { readonly context: HeldContext & { readonly input: { readonly parentSeq: number | null } } } | null;
};

/** A committed unit: its held executions, the events it appended to them and the events it delivered to others. */
export type CommittedUnit = {
  readonly held: readonly HeldExecution[];
  readonly rows: { readonly events: readonly CommittedEvent[]; readonly inbox: readonly DeliveredEvent[] };
};

/** Where committed units go when traces are on (EngineDeps.traces). */
export interface TraceSink {
  /** After the unit's commit, synchronously; never throws and never waits for the exporter. */
  committed(unit: CommittedUnit): void;
}
