import { Transform, type TransformCallback } from 'node:stream';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { AppDeps } from '../app-deps.ts';
import type { ServiceError } from '../errors.ts';
import { MAX_WEBHOOK_BODY_BYTES } from '../triggers/trigger.schema.ts';
import { acceptWebhook, asRefusal, findWebhook, refuseDelivery, type LiveWebhook, type WebhookAnswer } from '../triggers/webhook-delivery.ts';
import { WebhookFires } from '../triggers/webhook-fires.ts';
import * as v from 'valibot';
import { PUBLIC } from './access.ts';
import { requireReachablePath, requireReachableTriggerName } from './catalog-path.ts';
import { integer, responses } from './answers.ts';
import { discardBody, urlProblem } from './input-guard.ts';
import { documentedAt } from './documented-url.ts';
import { databaseNow } from '../waits/wait-clock.ts';

// POST /api/hooks/{playbook path}/{trigger name}: no API token, the trigger's signature
// authenticates (DESIGN.md "Triggers", docs/webhooks.md). Its own plugin: every content type is
// read as raw bytes (the signature is over them), up to the trigger's max_body_bytes.

const acceptedAnswer = v.object({
  execution_id: integer,
  duplicate: v.pipe(v.boolean(), v.description('the delivery was seen before: its execution answers, nothing new started')),
}) satisfies v.GenericSchema<unknown, WebhookAnswer>;

/** `{path, name}` from the wildcard: the last segment is the trigger's name, the rest the playbook's path. */
function target(tail: string): { path: string; name: string } | undefined {
  const slash = tail.lastIndexOf('/');
  if (slash <= 0 || slash === tail.length - 1) return undefined;
  return { path: tail.slice(0, slash), name: tail.slice(slash + 1) };
}

/** Passes bytes through until more than `limit` came, then fails with a 413 (the source is left readable, so the answer can be sent). */
class ByteLimit extends Transform {
  #seen = 0;
  readonly #limit: number;
  readonly #over: () => Error;
  constructor(limit: number, over: () => Error) {
    super();
    this.#limit = limit;
    this.#over = over;
  }
  override _transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback): void {
    this.#seen += chunk.length;
    if (this.#seen > this.#limit) return done(this.#over());
    done(null, chunk);
  }
}

/** The webhook receiver. */
export async function hookRoutes(app: FastifyInstance, deps: AppDeps): Promise<void> {
  const hooks = new WeakMap<FastifyRequest, LiveWebhook>();
  const accepting = { ...deps, fires: new WebhookFires(deps) };
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: MAX_WEBHOOK_BODY_BYTES }, (_req, body, done) => done(null, body));
  const tooLarge = (hook: LiveWebhook): ServiceError =>
    refuseDelivery(deps, 'too_large', 'payload_too_large', `the body is larger than the trigger's max_body_bytes (${hook.spec.max_body_bytes} bytes)`);

  // Every refusal is counted and has a `detail.code` (asRefusal; `request` counts what nothing
  // counted yet: the app's checks of the URL, fastify's of the body). An answer sent while the
  // sender still writes is lost to it: what is left of the body is read first (bounded, see
  // discardBody), then the app's handler answers.
  app.setErrorHandler(async (err, req) => {
    await discardBody(req.raw);
    throw asRefusal(deps, err, 'request');
  });

  app.post<{ Params: { '*': string } }>(
    '/api/hooks/*',
    {
      schema: {
        tags: ['triggers'],
        summary: 'A webhook delivery to trigger {name} of playbook {path}: POST /api/hooks/{path}/{name}',
        description:
          'No API token: the trigger authenticates the delivery (github, stripe, hmac or bearer signature with the secret of its credential). 202 `{execution_id, duplicate}`; 400 bad_request (a JSON body that does not parse, a delivery_id that renders empty); 401 signature_invalid; 404 not_found (unknown trigger); 409 trigger_paused; 413 payload_too_large (over max_body_bytes); 422 unprocessable (a JSON body nested deeper than 64 levels or holding what cannot be stored; a path or name longer than any trigger has), fire_refused. Every refusal has `detail.code`. See docs/webhooks.md.',
        response: responses({ 202: acceptedAnswer }),
      },
      config: { access: PUBLIC, swaggerTransform: documentedAt('/api/hooks/{path}/{name}') },
      bodyLimit: MAX_WEBHOOK_BODY_BYTES,
      // Before the body is read: which trigger, and so how many bytes it may send.
      preParsing: async (req, _reply, payload) => {
        // The app checks the URL before validation, after this hook: a NUL in the path must not reach the lookup.
        const q = req.url.indexOf('?');
        const bad = urlProblem(req.params, req.query, q === -1 ? '' : req.url.slice(q + 1));
        if (bad) {
          const where = bad.part === 'params' ? 'path' : 'querystring';
          const error = `${bad.problem.path ? `${bad.problem.path}: ` : ''}${bad.problem.message}`;
          throw refuseDelivery(deps, 'request', bad.status === 400 ? 'bad_request' : 'unprocessable', `invalid ${where}`, { errors: [error] });
        }
        const named = target(req.params['*']);
        if (!named) throw refuseDelivery(deps, 'unknown_trigger', 'not_found', 'no webhook trigger: POST /api/hooks/{playbook path}/{trigger name}');
        // One no registration takes: 422 naming the part (counted as a refused request), not a 404 echoing it.
        requireReachablePath(named.path);
        requireReachableTriggerName(named.name);
        const hook = await findWebhook(deps, named.path, named.name);
        hooks.set(req, hook);
        if (Number(req.headers['content-length']) > hook.spec.max_body_bytes) throw tooLarge(hook);
        // Whatever the Content-Type says, or however malformed it is (`text`, `;;;`, empty), the
        // bytes are read as sent and the signature decides: fastify answers 415 to a type it cannot
        // parse, so it is not shown one (the handler reads every header from req.raw).
        req.headers = { 'content-type': undefined };
        return payload.pipe(new ByteLimit(hook.spec.max_body_bytes, () => Object.assign(tooLarge(hook), { statusCode: 413 })));
      },
    },
    async (req, reply) => {
      const hook = hooks.get(req);
      if (!hook) throw refuseDelivery(deps, 'unknown_trigger', 'not_found', 'no webhook trigger');
      const raw = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
      const q = req.url.indexOf('?');
      // Every copy of every header: a signature header sent twice is refused (node's `headers` hides repeats).
      const answer = await acceptWebhook(accepting, hook, { raw, headers: req.raw.headersDistinct, rawQuery: q === -1 ? '' : req.url.slice(q + 1) }, new Date(databaseNow(deps)));
      return reply.code(202).send(answer);
    },
  );
}
