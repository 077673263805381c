import type { FastifyInstance } from 'fastify';
import * as v from 'valibot';
import type { AppDeps } from '../app-deps.ts';
import { listResources, type ResourceRow } from '../db/resource.repo.ts';
import { integer, responses } from './answers.ts';
import { exactObject, jsonSchema } from './validation.ts';
import { emptyQueryValuesAbsent } from './empty-query-values.ts';

const StoredConfig = v.looseObject({
  name: v.optional(v.nullable(v.string()), null),
  description: v.optional(v.nullable(v.string()), null),
  terminal: v.optional(
    v.nullable(
      v.looseObject({
        visible: v.optional(v.boolean(), false),
        workspace: v.optional(v.nullable(v.string()), null),
        scopes: v.optional(v.array(v.string()), []),
        capabilities: v.optional(v.array(v.string()), []),
      }),
    ),
    null,
  ),
});
const listQuery = exactObject({ workspace: v.optional(v.pipe(v.string(), v.maxLength(200))) });
const agentAnswer = v.object({
  path: v.string(),
  catalog_id: v.nullable(integer),
  version: v.nullable(integer),
  name: v.nullable(v.string()),
  workspace: v.nullable(v.string()),
  scopes: v.array(v.string()),
  capabilities: v.array(v.string()),
  description: v.nullable(v.string()),
});

type Agent = v.InferOutput<typeof agentAnswer>;

// An agent is offered to a terminal only when its document says `metadata.terminal.visible: true`,
// and while it can run as one: the newest version at its path decides (a plain playbook there is 404).
function visibleAgent(row: ResourceRow): Agent | undefined {
  if (!row.newest) return undefined;
  const parsed = v.safeParse(StoredConfig, row.config);
  if (!parsed.success || !parsed.output.terminal?.visible) return undefined;
  const { name, description, terminal } = parsed.output;
  return { path: row.path ?? row.name, catalog_id: row.catalog_id, version: row.version, name, workspace: terminal.workspace, scopes: terminal.scopes, capabilities: terminal.capabilities, description };
}

/** The agents a terminal may offer (GUI and `svc agent list`). */
export async function agentRoutes(app: FastifyInstance, deps: AppDeps): Promise<void> {
  app.get(
    '/api/agents',
    { schema: { tags: ['agents'], summary: 'Registered agents whose metadata.terminal.visible is true, optionally of one workspace', description: 'A workspace sent empty (`?workspace=`) is taken as not sent: every visible agent.', querystring: jsonSchema(listQuery), response: responses({ 200: v.object({ items: v.array(agentAnswer) }) }) }, config: { access: { level: 'viewer' } }, preValidation: emptyQueryValuesAbsent },
    async (req) => {
      const { workspace } = req.query as v.InferOutput<typeof listQuery>;
      const rows = await listResources(deps.db, 'agent');
      const items = rows.flatMap((row) => {
        const agent = visibleAgent(row);
        return agent && (workspace === undefined || agent.workspace === workspace) ? [agent] : [];
      });
      return { items };
    },
  );
}
