import type { FastifyInstance } from 'fastify';
import * as v from 'valibot';
import type { AppDeps } from '../app-deps.ts';
import { getCatalogEntry, insertCatalogVersion, listCatalog, type CatalogRow } from '../db/catalog.repo.ts';
import { upsertMcpResource, upsertResource } from '../db/resource.repo.ts';
import { integer, responses, time, withAnswerHeaders } from './answers.ts';
import { catalogVersions, catalogVersionsAnswer, VERSIONS_SUFFIX } from './catalog-versions.ts';
import { parseMcpServer, type McpServerDocument } from '../dsl/parse-mcp-server.ts';
import { parsePlaybook, type NormalizedPlaybook } from '../dsl/parse-playbook.ts';
import { positionOf, yamlPositions } from '../dsl/yaml-positions.ts';
import { registerTriggers } from '../triggers/register-triggers.ts';
import { countSkipped } from '../triggers/scheduler.ts';
import { REGISTERED_AGENT_TRIGGERS_PROBLEM } from '../triggers/trigger-problems.ts';
import { scheduleNow } from '../triggers/trigger-operations.ts';
import { setInlineCapacity } from '../db/flow.repo.ts';
import { inlineLimitName } from '../flow/limit-name.ts';
import { ServiceError, notFound } from '../errors.ts';
import { terminalWarnings } from '../dsl/terminal-warnings.ts';
import { sharedLimitWarnings } from '../flow/shared-limit-warnings.ts';
import { childPathWarnings } from './child-path-warnings.ts';
import { pathsOrNull, playbookStatechart, registrationWarnings, statechartAnswer, STATECHART_SUFFIX } from './playbook-statechart.ts';
import type { PathsReport } from '../../machines/simulate-playbook.ts';
import { stepCycleProblem } from '../../machines/step-cycle-problem.ts';
import { exactObject, integerText, jsonSchema, MAX_INT4, oneOf } from './validation.ts';
import { catalogPath, catalogPathProblem, requireReachablePath } from './catalog-path.ts';
import { documentedAt } from './documented-url.ts';
import { emptyQueryValuesAbsent } from './empty-query-values.ts';

/** The kinds of catalog entries: what registration takes as resource_type and the list filters by. */
const CATALOG_KINDS = ['playbook', 'agent', 'mcp'] as const;

// Exact: a misspelt `path` (`pth`) registered the document at its metadata.path instead.
const postPlaybookBody = exactObject({
  content: v.pipe(v.string(), v.minLength(1, 'content is empty')),
  path: v.optional(catalogPath),
});
const registerBody = exactObject({
  content: v.pipe(v.string(), v.minLength(1, 'content is empty')),
  resource_type: v.optional(oneOf(CATALOG_KINDS), 'playbook'),
});
// Exact, as every query that picks what is answered: `?versoin=1` answered the newest version.
const versionQuery = exactObject({
  version: v.optional(integerText(1, MAX_INT4)),
  from: v.optional(integerText(1, MAX_INT4)),
  to: v.optional(integerText(1, MAX_INT4)),
});
// Every kind an entry may have: a misspelt one (`agents`) is refused naming them, not an empty list.
const listQuery = exactObject({ kind: v.optional(oneOf(CATALOG_KINDS)) });

const entryFields = { catalog_id: integer, path: v.string(), version: integer, kind: v.pipe(v.string(), v.description('playbook, agent or mcp')) };
const registration = {
  status: v.literal('success'),
  unchanged: v.pipe(v.boolean(), v.description('the content is that of the newest version, which answers: no new version was made')),
  warnings: v.pipe(v.array(v.string()), v.description('fields a playbook task takes no effect from (auth), a playbook task whose literal path names no playbook in the catalog yet (or whose literal args its inputs refuse), metadata.terminal fields nothing reads, steps no path reaches, paths that end neither completed nor failed')),
};
// A registration answers the entry as GET does (DESIGN: catalog responses carry catalog_id, path,
// version, kind, content, created_at), with what the registration did.
const registeredAnswer = v.object({ ...entryFields, content: v.string(), created_at: time, ...registration });
const entryAnswer = v.pipe(v.object({ ...entryFields, content: v.string(), created_at: time }), v.description('{path}: the text of the newest (or ?version=N) version'));
const listAnswer = v.object({
  playbooks: v.array(v.object({ ...entryFields, created_at: time, name: v.nullable(v.string()), versions: v.pipe(integer, v.description('how many versions the path has')) })),
  count: integer,
});

/** Parses and validates a playbook or throws 400 listing every problem with its place in the document. */
function parseOr400(content: string, catalogPath?: string) {
  const parsed = parsePlaybook(content, catalogPath);
  if (!parsed.ok) {
    throw new ServiceError('invalid_playbook', {
      message: 'Playbook validation failed',
      errors: parsed.problems.map((p) => `${p.path}: ${p.message}`),
      problems: parsed.problems,
    });
  }
  return parsed;
}

/** Parses an `Mcp` document or throws 400 listing every problem with its place in the document. */
function parseMcpOr400(content: string): McpServerDocument {
  const parsed = parseMcpServer(content);
  if (!parsed.ok) {
    throw new ServiceError('invalid_playbook', {
      message: 'MCP server document validation failed',
      errors: parsed.problems.map((p) => `${p.path}: ${p.message}`),
      problems: parsed.problems,
    });
  }
  return parsed.server;
}

/** What a registered MCP server's resource row keeps: all a worker and the lifecycle need. */
function mcpResourceConfig(server: McpServerDocument) {
  return { endpoint: server.endpoint, transport: server.transport, auth: server.auth ?? null, lifecycle: server.lifecycle, config: server.config, description: server.metadata.description ?? null };
}

// A registration's 201 names the version it answers (RFC 9110, 10.2.2): GET reads it there.
const registeredResponses = () => withAnswerHeaders(responses({ 201: registeredAnswer }), 201, { location: 'the version answered: /api/catalog/playbook/{path}?version={version}' });
const versionUrl = (row: CatalogRow) => `/api/catalog/playbook/${row.path}?version=${row.version}`;

const present = (row: CatalogRow, withContent: boolean) => ({
  catalog_id: row.catalog_id,
  path: row.path,
  version: row.version,
  kind: row.kind,
  ...(withContent ? { content: row.content } : {}),
  created_at: row.created_at.toISOString(),
});

/**
 * An agent playbook (`metadata.agent: true`) stored as a plain playbook runs neither way: as a
 * playbook it is refused (422, an agent), as an agent it is 404 (not registered as one, the
 * spec's "Executable catalog entry not found"). Said at registration, where it can be fixed.
 */
function kindWarnings(kind: string, pb: { metadata: { agent?: boolean } }): string[] {
  return kind === 'playbook' && pb.metadata.agent === true
    ? ['metadata.agent is true but this was registered as a playbook: it starts only once registered as an agent (POST /api/catalog/register with resource_type "agent")']
    : [];
}

const warningsOf = (kind: string, pb: Parameters<typeof registrationWarnings>[0], report: PathsReport | null): string[] => [...kindWarnings(kind, pb), ...terminalWarnings(pb.metadata), ...registrationWarnings(pb, report)];

/** Throws 400 when some simulated path of the playbook fails with step_cycle (machines/step-cycle-problem.ts), at its place in `content`. */
function refuseStepCycle(content: string, pb: NormalizedPlaybook, report: PathsReport | null): void {
  const found = report && stepCycleProblem(pb, report);
  if (!found) return;
  const problem = { ...found, ...positionOf(yamlPositions(content), found.path) };
  throw new ServiceError('invalid_playbook', { message: 'Playbook validation failed', errors: [`${problem.path}: ${problem.message}`], problems: [problem] });
}

/** Catalog of playbooks: versions auto-increment per path; GET returns the newest. */
export async function catalogRoutes(app: FastifyInstance, deps: AppDeps): Promise<void> {
  const store = async (content: string, path: string | undefined, resourceType: 'playbook' | 'agent') => {
    const { playbook, warnings } = parseOr400(content, path);
    const finalPath = path ?? playbook.metadata.path;
    const problem = finalPath ? catalogPathProblem(finalPath) : 'a catalog path is required (in the request or in metadata.path)';
    if (!finalPath || problem) {
      const at = path === undefined ? 'metadata.path' : 'path';
      // Every problem of the document has its place (DESIGN.md "Authoring"); a body `path` is not in it.
      const place = at === 'metadata.path' ? positionOf(yamlPositions(content), at) : {};
      throw new ServiceError('invalid_playbook', { message: 'Playbook validation failed', errors: [`${at}: ${problem}`], problems: [{ path: at, message: problem, ...place }] });
    }
    const report = pathsOrNull(playbook);
    refuseStepCycle(content, playbook, report);
    const kind = resourceType === 'agent' ? 'agent' : 'playbook';
    // A document marked metadata.agent is refused its triggers by its own problems; one registered as an agent is here.
    if (kind === 'agent' && playbook.triggers.length > 0 && playbook.metadata.agent !== true) {
      const problem = { path: 'triggers', message: REGISTERED_AGENT_TRIGGERS_PROBLEM, ...positionOf(yamlPositions(content), 'triggers') };
      throw new ServiceError('invalid_playbook', { message: 'Playbook validation failed', errors: [`triggers: ${problem.message}`], problems: [problem] });
    }
    let skipped = 0;
    const stored = await deps.db.tx(async (q) => {
      const row = await insertCatalogVersion(q, { path: finalPath, kind, content, payload: playbook });
      // A new schedule's first fire is its next time after now by the database's clock, which the scheduler counts by.
      if (!row.unchanged) ({ skipped } = await registerTriggers(deps, q, { path: finalPath, catalogId: row.catalog_id, triggers: playbook.triggers }, scheduleNow(deps)));
      // Its inline limit's N is the newest version's, on the keys it has too (queued work is admitted up to it).
      const inline = playbook.concurrency?.limit;
      if (!row.unchanged && typeof inline === 'number') await setInlineCapacity(q, inlineLimitName(finalPath), inline);
      if (kind === 'agent') {
        const { name, description, terminal } = playbook.metadata;
        await upsertResource(q, { kind: 'agent', name: finalPath, catalogId: row.catalog_id, config: { name, description: description ?? null, terminal: terminal ?? null } });
      }
      return { row, warnings };
    });
    countSkipped(deps, skipped);
    const { row } = stored;
    const compiled = deps.cache.compile(row).playbook;
    const catalogWarnings = [...(await childPathWarnings(deps.db, compiled, row.path)), ...(await sharedLimitWarnings(deps.db, deps.cache, compiled, row.path))];
    return { row, warnings: [...stored.warnings, ...warningsOf(row.kind, compiled, report), ...catalogWarnings] };
  };

  // An MCP server: a catalog entry of kind `mcp` (its document) and the resource row named after it.
  // Its document is no playbook: there is nothing to compile, so nothing to warn of.
  const storeMcp = async (content: string): Promise<{ row: CatalogRow & { unchanged: boolean }; warnings: string[] }> => {
    const server = parseMcpOr400(content);
    const path = server.metadata.path ?? `mcp/${server.metadata.name}`;
    const problem = catalogPathProblem(path);
    if (problem) throw new ServiceError('invalid_playbook', { message: 'MCP server document validation failed', errors: [`metadata.path: ${problem}`], problems: [{ path: 'metadata.path', message: problem, ...positionOf(yamlPositions(content), 'metadata.path') }] });
    let skipped = 0;
    const row = await deps.db.tx(async (q) => {
      const row = await insertCatalogVersion(q, { path, kind: 'mcp', content, payload: server });
      // The newest version's triggers are the live ones: an MCP document at a playbook's path has none.
      if (!row.unchanged) ({ skipped } = await registerTriggers(deps, q, { path, catalogId: row.catalog_id, triggers: [] }, scheduleNow(deps)));
      // A server's name is held by its document's path: another path (another team's, under the
      // gateway's path patterns) may not take it over, its endpoint and auth credential with it.
      const name = server.metadata.name;
      const refused = await upsertMcpResource(q, { name, path, catalogId: row.catalog_id, config: mcpResourceConfig(server) });
      if (refused) {
        const message = `MCP server '${name}' is registered from ${refused.heldBy}: a document at ${path} may not take its name (register it at ${refused.heldBy}, or name it otherwise)`;
        throw new ServiceError('conflict', { message, errors: [`metadata.name: ${message}`] });
      }
      return row;
    });
    countSkipped(deps, skipped);
    return { row, warnings: [] };
  };

  app.post(
    '/api/catalog/playbook',
    { schema: { tags: ['catalog'], summary: 'Register a playbook version', body: jsonSchema(postPlaybookBody), response: registeredResponses() }, config: { access: { level: 'operator' } } },
    async (req, reply) => {
      const body = req.body as v.InferOutput<typeof postPlaybookBody>;
      const { row, warnings } = await store(body.content, body.path, 'playbook');
      // Content identical to the newest version makes no new one: that version answers, with
      // unchanged: true. Still 201, as every registration: clients that check it keep working.
      reply.code(201).header('location', versionUrl(row));
      return { status: 'success', ...present(row, true), unchanged: row.unchanged, warnings };
    },
  );

  app.post(
    '/api/catalog/register',
    { schema: { tags: ['catalog'], summary: 'Register a playbook, an agent or an MCP server (kind Mcp) resource', body: jsonSchema(registerBody), response: registeredResponses() }, config: { access: { level: 'operator' } } },
    async (req, reply) => {
      const body = req.body as v.InferOutput<typeof registerBody>;
      const { row, warnings } = body.resource_type === 'mcp' ? await storeMcp(body.content) : await store(body.content, undefined, body.resource_type);
      reply.code(201).header('location', versionUrl(row));
      return { status: 'success', ...present(row, true), unchanged: row.unchanged, warnings };
    },
  );

  app.get(
    '/api/catalog/playbook/*',
    {
      schema: {
        tags: ['catalog'],
        summary: 'The newest (or ?version=N) playbook at a path; {path}/statechart: its statechart; {path}/versions: its versions',
        description: `{path}${STATECHART_SUFFIX} answers the playbook's statechart: an xstate machine config importable by Stately's editor (one state per step with meta.step, arcs with meta.when). {path}${VERSIONS_SUFFIX} answers {path, versions: [{version, catalog_id, kind, created_at, content_hash}]} newest first; with ?from=N&to=M also {diff}: a unified line diff of the two versions' content.`,
        querystring: jsonSchema(versionQuery),
        response: responses({ 200: v.union([entryAnswer, catalogVersionsAnswer, statechartAnswer]) }),
      },
      config: { access: { level: 'viewer' }, swaggerTransform: documentedAt('/api/catalog/playbook/{path}') },
    },
    async (req) => {
      const path = (req.params as { '*': string })['*'];
      const { version, from, to } = req.query as v.InferOutput<typeof versionQuery>;
      // One wildcard route serves all three: a route cannot follow a wildcard.
      const suffix = [STATECHART_SUFFIX, VERSIONS_SUFFIX].find((s) => path.endsWith(s));
      const entry = suffix ? path.slice(0, -suffix.length) : path;
      requireReachablePath(entry);
      // Each parameter reads one of the three answers: elsewhere it was dropped (`?from=1&to=2`
      // on the path answered its newest text, no diff).
      const misplaced =
        suffix === VERSIONS_SUFFIX
          ? Object.entries({ version }).filter(([, value]) => value !== undefined).map(([name]) => `${name}: applies to ${entry} and its statechart, not its versions`)
          : Object.entries({ from, to }).filter(([, value]) => value !== undefined).map(([name]) => `${name}: applies only to ${entry}${VERSIONS_SUFFIX}`);
      if (misplaced.length) throw new ServiceError('unprocessable', { message: 'invalid querystring', errors: misplaced });
      if (suffix === STATECHART_SUFFIX) return playbookStatechart(deps.db, deps.cache, entry, version);
      if (suffix === VERSIONS_SUFFIX) return catalogVersions(deps.db, entry, from, to);
      const row = await getCatalogEntry(deps.db, entry, version);
      if (!row) throw notFound(version ? `playbook ${entry} version ${version}` : `playbook ${entry}`);
      return present(row, true);
    },
  );

  app.get(
    '/api/catalog/playbooks',
    { schema: { tags: ['catalog'], summary: 'Newest version of every catalog path', querystring: jsonSchema(listQuery), response: responses({ 200: listAnswer }) }, config: { access: { level: 'viewer' } }, preValidation: emptyQueryValuesAbsent },
    async (req) => {
      const { kind } = req.query as v.InferOutput<typeof listQuery>;
      const rows = await listCatalog(deps.db, kind);
      const playbooks = rows.map((r) => ({ ...r, created_at: r.created_at.toISOString() }));
      return { playbooks, count: playbooks.length };
    },
  );
}
