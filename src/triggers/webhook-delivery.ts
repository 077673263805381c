import * as v from 'valibot';
import type { EngineDeps } from '../../actors/engine-deps.ts';
import type { Keyring } from '../crypto/keyring.ts';
import { webhookTriggerRow } from '../db/webhook-trigger.repo.ts';
import { httpAnswerOf, ServiceError, type ErrorCode } from '../errors.ts';
import { renderTriggerPayload, type Fire } from './fire-trigger.ts';
import { WebhookTriggerSchema, type WebhookTrigger } from './trigger.schema.ts';
import type { WebhookFires } from './webhook-fires.ts';
import { webhookFireKey, webhookRequest } from './webhook-request.ts';
import { webhookSecret } from './webhook-secret.ts';
import { signatureHeaders, verifyWebhookSignature, type WebhookHeaders } from './webhook-signature.ts';

// One webhook delivery, from the live trigger it names to the execution it starts (DESIGN.md
// "Triggers", docs/webhooks.md). The route (src/api/hooks.ts) reads the bytes; this decides.

export type WebhookDeps = EngineDeps & { keyring: Keyring };

/**
 * Why a delivery started nothing, as `svc_trigger_requests_refused_total{reason}` counts it;
 * `request`: the request as sent, not its body (a path or query string that cannot be stored, a
 * body shorter than its Content-Length).
 */
export type RefusalReason = 'unknown_trigger' | 'too_large' | 'signature' | 'timestamp' | 'paused' | 'delivery_id' | 'body' | 'request';

/** A live webhook trigger: its identity, its checked spec and its credential's sealed data (null: none). */
export type LiveWebhook = { path: string; name: string; paused: boolean; catalogId: number; spec: WebhookTrigger; sealed: string | null };

/** A delivery as the route read it: the raw body bytes, every copy of each header (node's `headersDistinct`), the query string. */
export type WebhookDelivery = { raw: Buffer; headers: WebhookHeaders; rawQuery: string };

/** What a delivery answers: the execution it started, or the one the same fire key started first. */
export type WebhookAnswer = { execution_id: number; duplicate: boolean };

/** What accepting a delivery needs: the engine, the keyring that opens its secret, the fires' group commit. */
export type WebhookAcceptDeps = WebhookDeps & { fires: WebhookFires };

// Errors whose count is settled (a refusal, counted once however many handlers it passes; a
// refused fire, counted with the fires): asRefusal passes them on as they are.
const settled = new WeakSet<Error>();

/** Counts the refusal and makes the error the edge answers with: `detail` is `{code, message, ...more}`. */
export function refuseDelivery(deps: Pick<EngineDeps, 'metrics'>, reason: RefusalReason, code: ErrorCode, message: string, more: Record<string, unknown> = {}): ServiceError {
  deps.metrics.triggerRefused.inc({ reason });
  const refusal = new ServiceError(code, { ...more, code, message });
  settled.add(refusal);
  return refusal;
}

/**
 * `err` as the hook route answers it: a client error (4xx) counted under `reason` unless it was
 * already, its `detail` an object with the registry's `code` (a ServiceError keeps its code and
 * fields; fastify's own client errors become `payload_too_large` or `bad_request`). Server errors
 * pass unchanged: they are no refusal.
 */
export function asRefusal(deps: Pick<EngineDeps, 'metrics'>, err: unknown, reason: RefusalReason): unknown {
  if (!(err instanceof Error) || settled.has(err)) return err;
  if (err instanceof ServiceError) {
    if (httpAnswerOf(err.code).status >= 500) return err;
    const { message, ...more } = typeof err.detail === 'string' ? { message: err.detail } : err.detail;
    return refuseDelivery(deps, reason, err.code, typeof message === 'string' ? message : err.message, more);
  }
  const status = 'statusCode' in err && typeof err.statusCode === 'number' ? err.statusCode : 500;
  if (status < 400 || status >= 500) return err;
  return refuseDelivery(deps, reason, status === 413 ? 'payload_too_large' : 'bad_request', err.message);
}

/** The live webhook trigger `name` of `path`, or 404 (counted): none of that name, or not a webhook. */
export async function findWebhook(deps: WebhookDeps, path: string, name: string): Promise<LiveWebhook> {
  const row = await webhookTriggerRow(deps.db, path, name);
  const parsed = row?.kind === 'webhook' ? v.safeParse(WebhookTriggerSchema, row.spec) : undefined;
  if (!row || !parsed?.success) {
    if (parsed && !parsed.success) deps.log.warn({ trigger: `${path}/${name}` }, 'stored webhook trigger does not match its schema');
    throw refuseDelivery(deps, 'unknown_trigger', 'not_found', `no webhook trigger '${name}' on playbook '${path}'`);
  }
  return { path, name, paused: row.paused, catalogId: Number(row.catalog_id), spec: parsed.output, sealed: row.credential_sealed };
}

/**
 * Accepts a delivery of `hook`: its signature checked with the secret of the trigger's credential
 * (401 otherwise), not paused (409), its payload rendered over `{trigger, request}` and fired
 * exactly once under its fire key (delivery id, else the body's SHA-256), in group commit with the
 * deliveries that arrive meanwhile (webhook-fires.ts). A fire whose payload or
 * inputs are refused answers 422. Every refusal is counted and starts nothing. `now` (the database's
 * clock) is the fire's `fired_at` and what the signature's timestamp is held against.
 */
export async function acceptWebhook(deps: WebhookAcceptDeps, hook: LiveWebhook, delivery: WebhookDelivery, now: Date, rereads = MAX_REREADS): Promise<WebhookAnswer> {
  const { spec } = hook;
  const where = `${hook.path}/${hook.name}`;
  const found = webhookSecret(deps.keyring, spec.auth, hook.sealed);
  if ('problem' in found) {
    deps.log.warn({ trigger: where, problem: found.problem }, 'webhook delivery refused: the trigger\'s secret is not available');
    throw refuseDelivery(deps, 'signature', 'signature_invalid', 'the signature cannot be checked: the trigger\'s secret is not set up (the server log says why)');
  }
  const verdict = verifyWebhookSignature(spec.signature, found.secret, delivery.raw, delivery.headers, now.getTime());
  if (!verdict.ok) {
    // Debug: anyone may send these; the counter and the sender's answer say it at every level.
    deps.log.debug({ trigger: where, reason: verdict.reason }, `webhook delivery refused: ${verdict.message}`);
    throw refuseDelivery(deps, verdict.reason, 'signature_invalid', verdict.message);
  }
  const paused = () => refuseDelivery(deps, 'paused', 'trigger_paused', `trigger '${hook.name}' of '${hook.path}' is paused; resume it to accept deliveries`);
  if (hook.paused) throw paused();

  const request = counted(deps, 'body', () => webhookRequest(delivery.raw, delivery.headers, delivery.rawQuery, signatureHeaders(spec.signature)));
  const fireKey = counted(deps, 'delivery_id', () => webhookFireKey(spec.delivery_id, request, delivery.raw));
  // A form or text body may hold what PostgreSQL cannot store (NUL): the fire is refused, not failed (renderTriggerPayload).
  const rendered = renderTriggerPayload(spec.payload, { trigger: { name: hook.name, kind: 'webhook', scheduled_time: null, fired_at: now.toISOString() }, request });
  const fire: Fire = { fireKey, scheduledTime: null, ...rendered };
  const result = await deps.fires.fire({ path: hook.path, name: hook.name, kind: 'webhook' }, fire, hook.catalogId);
  // Paused, removed or changed while the body arrived (the trigger was read before it): nothing written.
  if ('inactive' in result) {
    if (result.inactive === 'paused') throw paused();
    // A new version (another secret, payload, inputs): the delivery is checked again against it.
    if (result.inactive === 'changed' && rereads > 0) return acceptWebhook(deps, await findWebhook(deps, hook.path, hook.name), delivery, now, rereads - 1);
    if (result.inactive === 'changed') throw new ServiceError('conflict', { code: 'conflict', message: `trigger '${hook.name}' of '${hook.path}' kept changing while the delivery was accepted: send it again` });
    throw refuseDelivery(deps, 'unknown_trigger', 'not_found', `no webhook trigger '${hook.name}' on playbook '${hook.path}'`);
  }
  if (result.outcome === 'started' && result.executionId !== null) return { execution_id: result.executionId, duplicate: result.duplicate };
  const refused = new ServiceError('fire_refused', { code: 'fire_refused', message: `the delivery started nothing: ${result.error ?? result.outcome}`, fire_key: result.fireKey, duplicate: result.duplicate });
  settled.add(refused); // counted in svc_trigger_fires_total{outcome="refused"}
  throw refused;
}

/** Times a delivery is checked again against a trigger that a new version changed while it was accepted. */
const MAX_REREADS = 3;

/** `make()`, a client error it throws made a refusal for `reason` (asRefusal). */
function counted<T>(deps: Pick<EngineDeps, 'metrics'>, reason: RefusalReason, make: () => T): T {
  try {
    return make();
  } catch (err) {
    throw asRefusal(deps, err, reason);
  }
}
