import type { Queryable } from './queryable.ts';

// What a webhook delivery needs before its body is read (src/triggers/webhook-delivery.ts), in one
// round trip: read only; core.trigger is written by trigger.repo.ts alone.

/** A live trigger with the sealed data of the credential its `auth` names (null: no such credential, or no `auth`). */
export type WebhookTriggerRow = { kind: string; spec: Record<string, unknown>; paused: boolean; catalog_id: number; credential_sealed: string | null };

/** The trigger `name` of `path` with its credential's sealed data; undefined when there is none. */
export async function webhookTriggerRow(q: Queryable, path: string, name: string): Promise<WebhookTriggerRow | undefined> {
  // Prepared: each delivery reads it, and planning it cost PostgreSQL more than running it.
  const { rows } = await q.query<WebhookTriggerRow>({
    name: 'svc_webhook_trigger',
    text: `SELECT t.kind, t.spec, t.paused, t.catalog_id::float8 AS catalog_id, c.data_encrypted AS credential_sealed
             FROM core.trigger t
             LEFT JOIN core.credential c ON c.name = t.spec->>'auth'
            WHERE t.path = $1 AND t.name = $2`,
    values: [path, name],
  });
  return rows[0];
}
