import { heldSql } from './command-plans.ts';
import type { Queryable } from './queryable.ts';

/** A claim as a worker names it (the CLAIM_HEADERS of src/protocol.ts). */
export type ClaimRef = { commandId: number; attempt: number; workerId: string };

/**
 * What a held command was given, to decide which secrets its worker may read: its execution and
 * catalog entry, its tasks, their context and the playbook's keychain definitions (as issued),
 * the MCP servers whose own `auth` is the credential asked for, and whether the secret handle
 * asked for is its workload's `access_token`.
 */
export type HeldCommand = {
  execution_id: number;
  catalog_id: number;
  tasks: unknown;
  context: unknown;
  keychain: unknown;
  mcp_servers: string[];
  carries_handle: boolean;
};

// One statement: the command as long as this claim holds it (the worker and attempt the claim
// gave, a status the machine counts as held: claimed or running, not over), with the registered
// MCP servers that use credential $4 and whether handle $5 is its execution's workload.access_token:
// the one place a handle is minted for (actors/access-tokens.ts); handle text anywhere else in the
// input may have come from data (another execution's events) and grants nothing.
const HELD_COMMAND = `SELECT c.execution_id, c.catalog_id,
       c.input->'tasks' AS tasks, c.input->'context' AS context, c.input->'keychain' AS keychain,
       ARRAY(SELECT r.name FROM core.resource r WHERE r.kind = 'mcp' AND r.config->>'auth' = $4::text) AS mcp_servers,
       COALESCE(c.input #>> '{context,workload,access_token}' = $5::text, false) AS carries_handle
  FROM core.command c
 WHERE c.command_id = $1 AND c.attempt = $2 AND c.worker_id = $3 AND ${heldSql('c')}`;

/**
 * The command `claim` names while that claim still holds it (undefined when it was never claimed,
 * is over, or another worker or a later attempt holds it); `credential` and `handle` (either may
 * be null) are what the caller asks for.
 */
export async function readHeldCommand(q: Queryable, claim: ClaimRef, credential: string | null, handle: string | null): Promise<HeldCommand | undefined> {
  const { rows } = await q.query<HeldCommand>(HELD_COMMAND, [claim.commandId, claim.attempt, claim.workerId, credential, handle]);
  return rows[0];
}
