import * as v from 'valibot';
import { ownKeysRecord } from '../own-keys-record.ts';
import { isObject } from '../objects.ts';

// Shape of a playbook's `triggers:` block (DESIGN.md "Triggers"). Rules that need more than the
// shape (a cron that parses, a known timezone, unique names, payload templates) are in
// trigger-problems.ts.

const nonEmptyString = v.pipe(v.string(), v.nonEmpty('must not be empty'));
const anyRecord = ownKeysRecord(v.string(), v.unknown());
const TRIGGER_NAME = /^[A-Za-z_][A-Za-z0-9_\-]*$/;
/** A trigger's name is a segment of its routes' URLs (`/api/hooks/{path}/{name}`): a name, not a text. */
export const MAX_TRIGGER_NAME_CHARS = 128;
// A credential is named, never written inline nor computed: the same pattern as the credentials API.
const CREDENTIAL_NAME = /^[A-Za-z0-9_][A-Za-z0-9_.\-]*$/;
const credentialName = v.pipe(v.string(), v.regex(CREDENTIAL_NAME, 'must be the name of a stored credential (letters, digits, _ . -), not a template or a secret'));
const count = (min: number, max: number) => v.pipe(v.number(), v.integer('must be an integer'), v.minValue(min, `must be >= ${min}`), v.maxValue(max, `must be <= ${max}`));

export const OVERLAP_POLICIES = ['skip', 'queue', 'allow', 'cancel_previous'] as const;
export const CATCH_UP_POLICIES = ['none', 'latest', 'all'] as const;
/** Fires started for one schedule after downtime with `catch_up: all`, unless it says otherwise. */
export const DEFAULT_MAX_CATCH_UP = 10;
export const MAX_CATCH_UP_LIMIT = 1000;
export const SIGNATURE_STYLES = ['github', 'stripe', 'hmac', 'bearer'] as const;
/** Webhook bodies over this are refused with 413 unless the trigger sets `max_body_bytes`. */
export const DEFAULT_WEBHOOK_BODY_BYTES = 1024 * 1024;
export const MAX_WEBHOOK_BODY_BYTES = 16 * 1024 * 1024;
export const DEFAULT_NATS_MAX_IN_FLIGHT = 16;

const common = {
  name: v.pipe(
    v.string(),
    v.regex(TRIGGER_NAME, 'must be a name of letters, digits, _ and - (starting with a letter or _)'),
    v.maxLength(MAX_TRIGGER_NAME_CHARS, `must be at most ${MAX_TRIGGER_NAME_CHARS} characters`),
  ),
  description: v.optional(v.string()),
  // Rendered per fire (roots: trigger, and request or message) and merged into the workload.
  payload: v.optional(anyRecord, () => ({})),
};

export const ScheduleTriggerSchema = v.strictObject({
  ...common,
  kind: v.literal('schedule'),
  cron: nonEmptyString,
  timezone: v.optional(nonEmptyString, 'UTC'),
  overlap: v.optional(v.picklist(OVERLAP_POLICIES), 'skip'),
  catch_up: v.optional(v.picklist(CATCH_UP_POLICIES), 'latest'),
  max_catch_up: v.optional(count(1, MAX_CATCH_UP_LIMIT), DEFAULT_MAX_CATCH_UP),
});

// RFC 9110 token characters: a name outside them (a space, a colon) no request can carry, so the
// trigger could never accept a delivery.
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const headerName = v.pipe(v.string(), v.regex(HEADER_NAME, 'must be an HTTP header name (letters, digits and !#$%&\'*+.^_`|~-, no spaces or colons)'));

/** The generic HMAC style: which headers carry the signature and the timestamp. */
export const HmacSignatureSchema = v.strictObject({
  style: v.literal('hmac', `must be hmac: the mapping form sets the hmac style's headers (the other styles are written signature: ${SIGNATURE_STYLES.filter((s) => s !== 'hmac').join(', ')})`),
  header: v.optional(headerName, 'x-signature'),
  // Text before the hex digest in the header (e.g. `sha256=`).
  prefix: v.optional(v.string(), ''),
  // When set, the signed text is `<timestamp>.<body>` and a timestamp outside 5 minutes is refused.
  timestamp_header: v.optional(headerName),
});

export const WebhookTriggerSchema = v.strictObject({
  ...common,
  kind: v.literal('webhook'),
  auth: credentialName,
  // A style's name, or the hmac mapping: chosen by the value's type, so a mapping's problems (a
  // misspelt `hedaer`) are named as the mapping's own, not as "expected a name or a mapping".
  signature: v.optional(
    v.lazy((input) => (isObject(input) ? HmacSignatureSchema : v.picklist(SIGNATURE_STYLES, `must be one of ${SIGNATURE_STYLES.join(', ')}, or a mapping {style: hmac, header, prefix, timestamp_header}`))),
    'hmac',
  ),
  // A template over `request` naming the delivery: a repeat answers with the first execution.
  delivery_id: v.optional(nonEmptyString),
  max_body_bytes: v.optional(count(1, MAX_WEBHOOK_BODY_BYTES), DEFAULT_WEBHOOK_BODY_BYTES),
});

// What NATS refuses at every try (the client's stream-name rule; a subject's tokens): a trigger
// holding one would never consume, so it is said at registration, naming the field.
const STREAM_NAME = /^[^.*>/\\\s]+$/;
const isNatsSubject = (text: string): boolean => !/\s/.test(text) && text.split('.').every((token, i, all) => token !== '' && (token !== '>' || i === all.length - 1));
const streamName = v.pipe(nonEmptyString, v.regex(STREAM_NAME, 'must be a JetStream stream name: no whitespace, ., *, >, / or \\'));
const natsSubject = v.pipe(nonEmptyString, v.check(isNatsSubject, 'must be a NATS subject: tokens separated by dots, none empty, no whitespace, > only as the last token (orders.created, orders.>)'));

export const NatsTriggerSchema = v.strictObject({
  ...common,
  kind: v.literal('nats'),
  auth: credentialName,
  stream: streamName,
  subject: natsSubject,
  max_in_flight: v.optional(count(1, 1000), DEFAULT_NATS_MAX_IN_FLIGHT),
});

export const TriggerSchema = v.variant('kind', [ScheduleTriggerSchema, WebhookTriggerSchema, NatsTriggerSchema]);

export type ScheduleTrigger = v.InferOutput<typeof ScheduleTriggerSchema>;
export type WebhookTrigger = v.InferOutput<typeof WebhookTriggerSchema>;
export type NatsTrigger = v.InferOutput<typeof NatsTriggerSchema>;
export type HmacSignature = v.InferOutput<typeof HmacSignatureSchema>;
export type TriggerSpec = v.InferOutput<typeof TriggerSchema>;
export type TriggerKind = TriggerSpec['kind'];
