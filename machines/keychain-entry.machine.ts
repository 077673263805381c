// One keychain entry as the worker/server sees it. Pure: effects are named actions with params
// that `transition()` returns; the host (actors/, worker) performs them. No I/O imports here.
import { assign, setup } from 'xstate';
import type { SnapshotFrom } from 'xstate';
import type { KeychainScope } from '../src/keychain/cache-key.ts';

export interface KeychainEntryContext {
  name: string;
  /** Scope decides whether the owner's completion removes the entry (local/shared only). */
  scope: KeychainScope;
  autoRenew: boolean;
  expiresAtMs: number | null;
  accessCount: number;
}

export interface KeychainEntryInput {
  name: string;
  scope: KeychainScope;
  autoRenew?: boolean;
  /** Expiry of an existing row (ms epoch); given → start `live`, absent/null → start `absent`. */
  expiresAtMs?: number | null;
  accessCount?: number;
}

export type KeychainEntryEvent =
  | { type: 'STORED'; expiresAt: number }
  | { type: 'READ'; now: number }
  | { type: 'RENEW' }
  | { type: 'RENEWED'; expiresAt: number }
  | { type: 'RENEW_FAILED'; reason: string }
  | { type: 'DELETED' }
  | { type: 'OWNER_FINISHED' };

/** Params of each effect the host performs. */
export interface RecordAccessParams {
  name: string;
  accessCount: number;
  accessedAtMs: number;
}
export interface EntryLogParams {
  name: string;
  /** Exact worker log line, e.g. `KEYCHAIN: Entry 'api' expired`. */
  message: string;
}
export interface EntryExpiredParams extends EntryLogParams {
  /** True: the read response carries `renew_config`. */
  autoRenew: boolean;
}
export interface RequestRenewalParams {
  name: string;
}
export interface StoreRenewedParams {
  name: string;
  expiresAtMs: number;
}
export interface LogRenewalFailedParams extends EntryLogParams {
  /** Why renewal failed; built by tokenFromRenewResponse, never holds a token. */
  reason: string;
}
export interface DeleteEntryParams {
  name: string;
  scope: KeychainScope;
}

export type ReadOutcome = 'not_found' | 'success' | 'expired';

export const keychainEntryMachine = setup({
  types: {
    context: {} as KeychainEntryContext,
    events: {} as KeychainEntryEvent,
    input: {} as KeychainEntryInput,
  },
  actions: {
    // Host: bump access_count and accessed_at of the row.
    recordAccess: (_args, _params: RecordAccessParams) => {},
    // Host (worker): log `KEYCHAIN: Entry '<name>' not found`.
    logNotFound: (_args, _params: EntryLogParams) => {},
    // Host (worker): log `KEYCHAIN: Entry '<name>' expired`; answer `expired` (+ renew_config).
    logExpired: (_args, _params: EntryExpiredParams) => {},
    // Host (worker): call the renew_config endpoint, then send RENEWED or RENEW_FAILED.
    requestRenewal: (_args, _params: RequestRenewalParams) => {},
    // Host (worker): write the fresh token with its expiry (POST /api/keychain/...).
    storeRenewedEntry: (_args, _params: StoreRenewedParams) => {},
    // Host (worker): log `KEYCHAIN: Failed to renew '<name>'` and resolve the entry as {}.
    logRenewalFailed: (_args, _params: LogRenewalFailedParams) => {},
    // Host (server): remove the row when its owning (or root) execution finished.
    deleteEntry: (_args, _params: DeleteEntryParams) => {},
  },
  guards: {
    hasStoredExpiry: ({ context }) => context.expiresAtMs !== null,
    isPastExpiry: ({ context }, params: { nowMs: number }) =>
      context.expiresAtMs === null || params.nowMs >= context.expiresAtMs,
    canAutoRenew: ({ context }) => context.autoRenew,
    isOwnedByExecution: ({ context }) => context.scope === 'local' || context.scope === 'shared',
  },
}).createMachine({
  id: 'keychainEntry',
  // xstate's transition() computes a throwaway initial snapshot without input: answer it cheaply
  // rather than throw (an exception per transition).
  context: ({ input }) => ({
    name: input?.name ?? '',
    scope: input?.scope ?? 'global',
    autoRenew: input?.autoRenew ?? false,
    expiresAtMs: input?.expiresAtMs ?? null,
    accessCount: input?.accessCount ?? 0,
  }),
  initial: 'hydrating',
  // Transitions every state shares: a set stores a fresh value, a delete removes the row.
  on: {
    STORED: {
      target: '.live',
      actions: assign({ expiresAtMs: ({ event }) => event.expiresAt, accessCount: 0 }),
    },
    DELETED: {
      target: '.absent',
      actions: assign({ expiresAtMs: null, accessCount: 0 }),
    },
    OWNER_FINISHED: {
      guard: 'isOwnedByExecution',
      target: '.absent',
      actions: [
        { type: 'deleteEntry', params: ({ context }) => ({ name: context.name, scope: context.scope }) },
        assign({ expiresAtMs: null, accessCount: 0 }),
      ],
    },
  },
  states: {
    // Transient: picks `live` for a hydrated row, `absent` otherwise.
    hydrating: {
      always: [{ guard: 'hasStoredExpiry', target: 'live' }, { target: 'absent' }],
    },
    absent: {
      on: {
        READ: {
          actions: {
            type: 'logNotFound',
            params: ({ context }) => ({ name: context.name, message: `KEYCHAIN: Entry '${context.name}' not found` }),
          },
        },
        // A delete or owner completion of a missing row changes nothing.
        DELETED: {},
        OWNER_FINISHED: {},
      },
    },
    live: {
      on: {
        READ: [
          {
            guard: { type: 'isPastExpiry', params: ({ event }) => ({ nowMs: event.now }) },
            target: 'expired',
            actions: {
              type: 'logExpired',
              params: ({ context }) => ({
                name: context.name,
                autoRenew: context.autoRenew,
                message: `KEYCHAIN: Entry '${context.name}' expired`,
              }),
            },
          },
          {
            actions: [
              {
                type: 'recordAccess',
                params: ({ context, event }) => ({
                  name: context.name,
                  accessCount: context.accessCount + 1,
                  accessedAtMs: event.now,
                }),
              },
              assign({ accessCount: ({ context }) => context.accessCount + 1 }),
            ],
          },
        ],
        // No RENEW here: the spec renews only what a read found expired, so `renewing` and
        // `renewalFailed` always stand for an expired row and read as `expired`.
      },
    },
    expired: {
      on: {
        READ: {
          actions: {
            type: 'logExpired',
            params: ({ context }) => ({
              name: context.name,
              autoRenew: context.autoRenew,
              message: `KEYCHAIN: Entry '${context.name}' expired`,
            }),
          },
        },
        RENEW: {
          guard: 'canAutoRenew',
          target: 'renewing',
          actions: { type: 'requestRenewal', params: ({ context }) => ({ name: context.name }) },
        },
      },
    },
    // Reads while the token request is out answer `expired` (readOutcome) and change nothing.
    renewing: {
      on: {
        RENEWED: {
          target: 'live',
          actions: [
            assign({ expiresAtMs: ({ event }) => event.expiresAt, accessCount: 0 }),
            {
              type: 'storeRenewedEntry',
              params: ({ context, event }) => ({ name: context.name, expiresAtMs: event.expiresAt }),
            },
          ],
        },
        RENEW_FAILED: {
          target: 'renewalFailed',
          actions: {
            type: 'logRenewalFailed',
            params: ({ context, event }) => ({
              name: context.name,
              reason: event.reason,
              message: `KEYCHAIN: Failed to renew '${context.name}'`,
            }),
          },
        },
      },
    },
    // Renewal is not retried automatically: RENEW is ignored here; a later READ starts over.
    renewalFailed: {
      on: {
        READ: {
          target: 'expired',
          actions: {
            type: 'logExpired',
            params: ({ context }) => ({
              name: context.name,
              autoRenew: context.autoRenew,
              message: `KEYCHAIN: Entry '${context.name}' expired`,
            }),
          },
        },
      },
    },
  },
});

export type KeychainEntrySnapshot = SnapshotFrom<typeof keychainEntryMachine>;

/** Response status a read gives in this state: `not_found`, `success` (live) or `expired`. */
export function readOutcome(snapshot: KeychainEntrySnapshot): ReadOutcome {
  if (snapshot.matches('absent') || snapshot.matches('hydrating')) return 'not_found';
  if (snapshot.matches('live')) return 'success';
  return 'expired';
}
