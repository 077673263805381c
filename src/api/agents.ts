import type { FastifyInstance } from 'fastify';
import * as v from 'valibot';
import type { AppDeps } from '../app-deps.ts';
import { listResources, type ResourceRow } from '../db/resource.repo.ts';
import { jsonSchema } from './validation.ts';

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
const listQuery = v.object({ workspace: v.optional(v.pipe(v.string(), v.maxLength(200))) });

type Agent = { path: string; catalog_id: number | null; version: number | null; name: string | null; workspace: string | null; scopes: string[]; capabilities: string[]; description: string | null };

// An agent is offered to a terminal only when its document says `metadata.terminal.visible: true`.
function visibleAgent(row: ResourceRow): Agent | undefined {
  const parsed = v.safeParse(StoredConfig, row.config);
  if (!parsed.success || !parsed.output.terminal?.visible) return undefined;
  const { name, description, terminal } = parsed.output;
  return { path: row.path ?? row.name, catalog_id: row.catalog_id, version: row.version, name, workspace: terminal.workspace, scopes: terminal.scopes, capabilities: terminal.capabilities, description };
}

/** The agents a terminal may offer (GUI and `svc agent list`). */
export async function agentRoutes(app: FastifyInstance, deps: AppDeps): Promise<void> {
  app.get(
    '/api/agents',
    { schema: { tags: ['agents'], summary: 'Registered agents whose metadata.terminal.visible is true, optionally of one workspace', querystring: jsonSchema(listQuery) }, config: { access: { level: 'viewer' } } },
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
