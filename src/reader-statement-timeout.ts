/**
 * The longest a statement of the service database's reader role runs: the role's own
 * statement_timeout (migrations/0002_credentials.sql). A connection may lower it, never raise it.
 */
export const READER_STATEMENT_TIMEOUT_MS = 30_000;
