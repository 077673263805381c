// A worker's turn to make or renew a keychain entry: it takes the entry's renewal lease from the
// server (src/api/keychain-renewal.ts), or waits while another worker holds it and uses the entry
// that worker stores. So a token endpoint is asked once however many pools need the entry at once,
// and no two tokens overwrite each other. Used by keychain-resolver.ts.
import * as v from 'valibot';
import { RENEWAL_LEASE_SECONDS } from '../keychain/renewal-lease.ts';
import type { ServerClient } from './server-client.ts';

const MS_PER_SECOND = 1000;
// Past the lease the key is free again: a waiter that still has no entry then makes it itself.
const WAIT_LIMIT_MS = RENEWAL_LEASE_SECONDS * MS_PER_SECOND + 5_000;
const DEFAULT_RETRY_MS = 150;
const MAX_RETRY_MS = 2_000;

const TurnAnswer = v.variant('status', [
  v.looseObject({ status: v.literal('granted'), lease_id: v.pipe(v.string(), v.uuid()) }),
  v.looseObject({ status: v.literal('held'), retry_after_ms: v.optional(v.number()) }),
  v.looseObject({ status: v.literal('live') }),
]);

/** `make`: this worker makes the entry, then calls `release`; `live`: another made it, here it is. */
export type Turn<T> = { kind: 'make'; release: () => Promise<void> } | { kind: 'live'; value: T };

export type TurnRequest<T> = {
  client: ServerClient;
  /** `/api/keychain/<catalog_id>/<name>`. */
  entryPath: string;
  /** scope_type and execution_id, as the entry's read names them. */
  query: Record<string, string>;
  /** The claim headers of the command that needs the entry. */
  claim: Record<string, string>;
  /** Reads the entry: its value when live, else undefined. */
  readLive: () => Promise<T | undefined>;
};

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const retryMs = (asked: number | undefined) => Math.min(MAX_RETRY_MS, Math.max(10, asked ?? DEFAULT_RETRY_MS));
const noRelease = async (): Promise<void> => {};

/** Waits for this worker's turn: the lease, or the entry another worker stored meanwhile. */
export async function renewalTurn<T>(req: TurnRequest<T>): Promise<Turn<T>> {
  const deadline = Date.now() + WAIT_LIMIT_MS;
  for (;;) {
    const answer = await take(req);
    // A server without leases (older), or one that did not answer: make it, as before leases.
    if (answer === undefined) return { kind: 'make', release: noRelease };
    if (answer.status === 'granted') return grantedTurn(req, answer.lease_id);
    await sleep(retryMs(answer.status === 'held' ? answer.retry_after_ms : undefined));
    const value = await req.readLive();
    if (value !== undefined) return { kind: 'live', value };
    if (Date.now() >= deadline) return { kind: 'make', release: noRelease };
  }
}

/** Granted: a holder may have stored the entry just before this take saw it, so read once more first. */
async function grantedTurn<T>(req: TurnRequest<T>, leaseId: string): Promise<Turn<T>> {
  const release = () => give(req, leaseId);
  const value = await req.readLive();
  if (value === undefined) return { kind: 'make', release };
  await release();
  return { kind: 'live', value };
}

async function take<T>(req: TurnRequest<T>): Promise<v.InferOutput<typeof TurnAnswer> | undefined> {
  try {
    const answer = await req.client.request<unknown>('POST', `${req.entryPath}/renewal?${new URLSearchParams(req.query)}`, undefined, undefined, { headers: req.claim });
    const parsed = v.safeParse(TurnAnswer, answer);
    return parsed.success ? parsed.output : undefined;
  } catch {
    return undefined;
  }
}

/** Gives the lease back; a lost answer leaves it to expire. */
async function give<T>(req: TurnRequest<T>, leaseId: string): Promise<void> {
  try {
    await req.client.request<unknown>('DELETE', `${req.entryPath}/renewal?${new URLSearchParams({ ...req.query, lease_id: leaseId })}`, undefined, undefined, { headers: req.claim });
  } catch {
    // The lease expires by itself.
  }
}
