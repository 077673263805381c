import { randomUUID } from 'node:crypto';
import { executionSecretAad, seal } from '../src/crypto/seal.ts';
import { insertExecutionSecrets } from '../src/db/execution-secret.repo.ts';
import { secretHandle, tokenToSeal } from '../src/secret-handle.ts';
import type { EngineDeps } from './engine-deps.ts';

// A start's `workload.access_token` never enters the event log, commands or snapshots: it is sealed
// into core.execution_secret and the workload carries its handle (src/secret-handle.ts), which the
// worker of an `mcp` task exchanges (GET /api/secrets/{uuid}). Sealed at the two points every start
// passes before its rows are folded: startExecutions for the starts of routes, triggers, webhooks,
// lifecycle actions, retries and resumes, and runUnit for a `playbook` task's child (its args).

// An MCP access token is short-lived (an hour for cloud tokens); a day covers retries and resumes.
const EXECUTION_SECRET_TTL_SECONDS = 86_400;

/** Seals each token once and stores them all in one statement; the handle of each, by token. No tokens: no round trip. */
export async function sealAccessTokens(deps: Pick<EngineDeps, 'db' | 'keyring'>, tokens: Iterable<string>): Promise<Map<string, string>> {
  const keyring = deps.keyring;
  // Never stored in plain text instead: a host without a keyring (an engine test) starts no token.
  if (!keyring) throw new Error('no keyring to seal a workload access_token with');
  const handles = new Map<string, string>();
  const rows: { handle: string; sealed: string }[] = [];
  for (const token of tokens) {
    if (handles.has(token)) continue;
    const uuid = randomUUID();
    rows.push({ handle: uuid, sealed: seal(keyring, token, executionSecretAad(uuid)) });
    handles.set(token, secretHandle(uuid));
  }
  await insertExecutionSecrets(deps.db, rows, EXECUTION_SECRET_TTL_SECONDS);
  return handles;
}

/**
 * `inputs` with each payload's `access_token` replaced by a handle of its own (the same objects when
 * none has one): any non-empty string, a handle's text included, unless the input carries an
 * earlier execution's own workload (`ownHandles`: a retry, a resume), whose handle is passed on.
 */
export async function withholdAccessTokens<T extends { payload: Record<string, unknown>; ownHandles?: true }>(deps: Pick<EngineDeps, 'db' | 'keyring'>, inputs: readonly T[]): Promise<readonly T[]> {
  const toSeal = (i: T): string | undefined => tokenToSeal(i.payload.access_token, i.ownHandles === true);
  const tokens = inputs.flatMap((i) => toSeal(i) ?? []);
  if (tokens.length === 0) return inputs;
  const handles = await sealAccessTokens(deps, tokens);
  return inputs.map((i) => {
    const token = toSeal(i);
    return token === undefined ? i : { ...i, payload: { ...i.payload, access_token: handles.get(token) } };
  });
}
