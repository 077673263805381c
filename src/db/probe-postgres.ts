import type pg from 'pg';
import { runStatement } from './sql-execute.ts';

// Connecting has its own 10 s bound (sql-execute.ts); the statement gets this.
const PROBE_STATEMENT_TIMEOUT_MS = 5_000;

/** Connects with `config` and runs `SELECT 1`; throws SqlExecutionError (connect or statement) when it cannot. */
export async function probePostgres(config: pg.ClientConfig): Promise<void> {
  await runStatement(config, 'SELECT 1', { timeoutMs: PROBE_STATEMENT_TIMEOUT_MS });
}
