import type { FastifyInstance } from 'fastify';
import * as v from 'valibot';
import { StartBatcher, type Started } from '../../actors/start-execution.ts';
import type { AppDeps } from '../app-deps.ts';
import { getResource, listResources, recordLifecycleDispatch, type ResourceRow } from '../db/resource.repo.ts';
import { MCP_TRANSPORTS } from '../dsl/parse-mcp-server.ts';
import { notFound, ServiceError } from '../errors.ts';
import { jsonObject } from './executions.ts';
import { mcpServerStatus } from './mcp-status.ts';
import { anyObject, integer, REPLAYED_HEADER_DOC, responses, time, withAnswerHeaders } from './answers.ts';
import { IDEMPOTENCY_KEY_HEADER, IdempotentStarts } from './idempotent-starts.ts';
import { exactObject, jsonSchema } from './validation.ts';
import { ownKeysRecord } from '../own-keys-record.ts';

const StoredConfig = v.looseObject({
  endpoint: v.string(),
  transport: v.optional(v.picklist(MCP_TRANSPORTS), 'auto'),
  auth: v.optional(v.nullable(v.string()), null),
  lifecycle: v.optional(ownKeysRecord(v.string(), v.string()), {}),
  config: v.optional(ownKeysRecord(v.string(), v.unknown()), {}),
  description: v.optional(v.nullable(v.string()), null),
});
const nameParams = v.object({ name: v.pipe(v.string(), v.minLength(1), v.maxLength(200)) });
const lifecycleParams = v.object({ server_name: v.pipe(v.string(), v.minLength(1), v.maxLength(200)), action: v.pipe(v.string(), v.minLength(1), v.maxLength(100)) });
// Exact: a misspelt `paylod` would start the action on its defaults, the payload dropped.
const lifecycleBody = v.optional(exactObject({ payload: v.optional(jsonObject) }), {});

// jsonb keeps no key order: actions are listed the usual lifecycle way, then the others by name.
const ACTION_ORDER = ['deploy', 'undeploy', 'restart', 'status'];
const actionRank = (action: string) => (ACTION_ORDER.includes(action) ? ACTION_ORDER.indexOf(action) : ACTION_ORDER.length);
const orderedActions = (actions: string[]) => [...actions].sort((a, b) => actionRank(a) - actionRank(b) || a.localeCompare(b));

const serverAnswer = v.object({
  name: v.string(),
  path: v.nullable(v.string()),
  catalog_id: v.nullable(integer),
  endpoint: v.string(),
  transport: v.picklist(MCP_TRANSPORTS),
  auth: v.nullable(v.pipe(v.string(), v.description('the credential it authenticates with'))),
  description: v.nullable(v.string()),
  status: v.pipe(v.string(), v.description('registered before any action; deploying, running, stopped, <action>_failed… after (src/api/mcp-status.ts)')),
  lifecycle: v.pipe(v.array(v.string()), v.description('its lifecycle actions')),
  lifecycle_playbooks: v.pipe(ownKeysRecord(v.string(), v.string()), v.description('the playbook path of each action')),
  config: anyObject,
  last_action: v.nullable(v.string()),
  last_execution_id: v.nullable(integer),
  updated_at: time,
});
// A dispatch answers 202 (the action runs on), stored with its key so that a repeat answers alike.
const DISPATCHED = 202;
const keyHeader = { type: 'object', properties: { [IDEMPOTENCY_KEY_HEADER.toLowerCase()]: { type: 'string', description: 'Optional: the same key and body again to this server and action is the same dispatch (answered as the first, the same execution_id), for at least 24 h; another body is 422 (idempotency_key_reused).' } } };
const dispatchedAnswer = v.object({ execution_id: integer, server: v.string(), action: v.string(), status: v.literal('started'), path: v.string() });

/** A resource row of kind mcp as the API presents it (the stored config was validated at registration). */
function presentServer(row: ResourceRow): v.InferOutput<typeof serverAnswer> {
  const parsed = v.safeParse(StoredConfig, row.config);
  const empty: v.InferOutput<typeof StoredConfig> = { endpoint: '', transport: 'auto', auth: null, lifecycle: {}, config: {}, description: null };
  const c = parsed.success ? parsed.output : empty;
  return {
    name: row.name,
    path: row.path,
    catalog_id: row.catalog_id,
    endpoint: c.endpoint,
    transport: c.transport,
    auth: c.auth,
    description: c.description,
    status: mcpServerStatus(row.last_action, row.execution_status),
    lifecycle: orderedActions(Object.keys(c.lifecycle)),
    lifecycle_playbooks: c.lifecycle,
    config: c.config,
    last_action: row.last_action,
    last_execution_id: row.last_execution_id,
    updated_at: row.updated_at.toISOString(),
  };
}

/** MCP servers registered as catalog resources: listing, one by name (workers resolve `server:`), lifecycle dispatch. */
export async function mcpRoutes(app: FastifyInstance, deps: AppDeps): Promise<void> {
  const starter = new StartBatcher(deps);
  const dispatches = new IdempotentStarts(deps, DISPATCHED);

  app.get('/api/mcp/servers', { schema: { tags: ['mcp'], summary: 'Registered MCP servers with their last known status', response: responses({ 200: v.object({ items: v.array(serverAnswer) }) }) }, config: { access: { level: 'viewer' } } }, async () => {
    const rows = await listResources(deps.db, 'mcp');
    return { items: rows.map(presentServer) };
  });

  app.get(
    '/api/mcp/servers/:name',
    { schema: { tags: ['mcp'], summary: 'One MCP server (workers resolve a task\'s `server:` here)', params: jsonSchema(nameParams), response: responses({ 200: serverAnswer }) }, config: { access: { level: 'viewer', worker: true } } },
    async (req) => {
      const { name } = req.params as v.InferOutput<typeof nameParams>;
      const row = await getResource(deps.db, 'mcp', name);
      if (!row) throw notFound(`MCP server '${name}'`);
      return presentServer(row);
    },
  );

  app.post(
    '/api/mcp/mcp/:server_name/lifecycle/:action',
    {
      schema: {
        tags: ['mcp'],
        summary: "Start an MCP server's lifecycle action (deploy, undeploy, restart, status…)",
        description: "Starts the playbook the server's document maps the action to, with `workload.server` (and `args.server`) the server's document and `workload.action` the action, plus `payload`. Answers 202 at once; the action's outcome becomes the server's status. `Idempotency-Key` makes a repeat (a dispatch whose answer was lost, sent again) the same dispatch: answered as the first, nothing started twice.",
        params: jsonSchema(lifecycleParams),
        body: jsonSchema(lifecycleBody),
        headers: keyHeader,
        response: withAnswerHeaders(responses({ [DISPATCHED]: dispatchedAnswer }), DISPATCHED, REPLAYED_HEADER_DOC),
      },
      config: { access: { level: 'operator' } },
    },
    async (req, reply) => {
      const { server_name: name, action } = req.params as v.InferOutput<typeof lifecycleParams>;
      const body = (req.body ?? {}) as v.InferOutput<typeof lifecycleBody>;
      reply.code(DISPATCHED);
      return dispatches.answer(req, reply, async (claim) => {
        const row = await getResource(deps.db, 'mcp', name);
        if (!row) throw notFound(`MCP server '${name}'`);
        const server = presentServer(row);
        const playbookPath = Object.hasOwn(server.lifecycle_playbooks, action) ? server.lifecycle_playbooks[action] : undefined;
        if (!playbookPath) {
          const known = server.lifecycle.length ? server.lifecycle.join(', ') : 'none';
          throw new ServiceError('not_found', `MCP server '${name}' has no lifecycle action '${action}' (its actions: ${known})`);
        }
        const document = { name: server.name, endpoint: server.endpoint, transport: server.transport, auth: server.auth, config: server.config, lifecycle: server.lifecycle_playbooks };
        const answer = (s: Started) => ({ execution_id: s.executionId, server: name, action, status: 'started', path: s.path });
        // Started as a plain playbook (`as`): an agent playbook (registered as one, or marked
        // metadata.agent) is refused as POST /api/run/playbook refuses it (docs/agents.md). The
        // key is written with the start, so a dispatch sent again starts nothing.
        const started = await starter.start({ path: playbookPath, payload: { ...body.payload, server: document, action }, requestedBy: req.identity ?? undefined, as: 'playbook', idempotency: claim && { ...claim, answer } });
        await recordLifecycleDispatch(deps.db, 'mcp', name, action, started.executionId);
        return answer(started);
      });
    },
  );
}
