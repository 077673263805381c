import type { Queryable } from './queryable.ts';

// What a server needs to subscribe to its NATS triggers (src/triggers/nats-subscriptions.ts):
// read only; core.trigger is written by trigger.repo.ts alone.

/** A live `kind: nats` trigger with the credential its `auth` names (null columns: no such credential). */
export type NatsTriggerRow = {
  path: string;
  name: string;
  spec: Record<string, unknown>;
  paused: boolean;
  /** The catalog version whose registration last wrote the trigger. */
  catalog_id: number;
  /** When the trigger first became live: its consumer delivers what was published from then on. */
  created_at: Date;
  credential_type: string | null;
  /** Sealed text (src/crypto/seal.ts), opened by the subscriber with the keyring. */
  credential_sealed: string | null;
  credential_updated_at: Date | null;
};

/** Every live NATS trigger, paused or not, with its credential's sealed data, by path and name. */
export async function natsTriggerRows(q: Queryable): Promise<NatsTriggerRow[]> {
  const { rows } = await q.query<NatsTriggerRow>(
    `SELECT t.path, t.name, t.spec, t.paused, t.catalog_id::float8 AS catalog_id, t.created_at,
            c.type AS credential_type, c.data_encrypted AS credential_sealed, c.updated_at AS credential_updated_at
       FROM core.trigger t
       LEFT JOIN core.credential c ON c.name = t.spec->>'auth'
      WHERE t.kind = 'nats'
      ORDER BY t.path, t.name`,
  );
  return rows;
}
