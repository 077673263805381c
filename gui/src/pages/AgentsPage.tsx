import { load } from 'js-yaml';
import { useState } from 'react';
import { api, apiOrNull, encodePath, type CatalogEntry } from '../api.ts';
import { usePoll } from '../hooks.ts';
import { href } from '../route.ts';
import { useCan } from '../session.ts';
import { ErrorBox, Section, StatusBadge } from '../ui.tsx';
import { AgentRun, type Agent } from './AgentTerminal.tsx';

/** One item of GET /api/mcp/servers (src/api/mcp.ts). */
type McpServer = {
  name: string;
  path: string;
  endpoint: string;
  transport: string;
  description: string | null;
  status: string;
  lifecycle: string[];
  last_action: string | null;
  last_execution_id: number | string | null;
  updated_at: string;
};

// While a lifecycle action runs the list is read often, so its outcome shows within a second.
const MCP_BUSY_REFRESH_MS = 1_000;
const MCP_IDLE_REFRESH_MS = 5_000;
// The statuses src/api/mcp-status.ts gives while an action's execution runs.
const mcpBusy = (status: string) => ['deploying', 'undeploying', 'restarting', 'checking'].includes(status) || status.endsWith('_running');

const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((s): s is string => typeof s === 'string') : []);

/**
 * Agents the terminal shows (`metadata.terminal.visible`), for a server without GET /api/agents:
 * read from the catalog's agent entries.
 */
async function agentsFromCatalog(signal: AbortSignal): Promise<Agent[]> {
  const list = await api<{ playbooks: CatalogEntry[] }>('/catalog/playbooks?kind=agent', { signal });
  const out: Agent[] = [];
  for (const p of list.playbooks) {
    const entry = await apiOrNull<CatalogEntry>(`/catalog/playbook/${encodePath(p.path)}`, { signal });
    let doc: unknown;
    try {
      doc = load(entry?.content ?? '');
    } catch {
      continue;
    }
    const meta = doc && typeof doc === 'object' ? ((doc as { metadata?: Record<string, unknown> }).metadata ?? {}) : {};
    const terminal = (meta.terminal ?? {}) as Record<string, unknown>;
    if (terminal.visible === false) continue;
    out.push({
      path: p.path,
      catalog_id: p.catalog_id,
      version: p.version,
      name: typeof meta.name === 'string' ? meta.name : p.path,
      workspace: typeof terminal.workspace === 'string' ? terminal.workspace : null,
      scopes: strings(terminal.scopes),
      capabilities: strings(terminal.capabilities),
      description: typeof meta.description === 'string' ? meta.description : null,
    });
  }
  return out;
}

/** The agents terminal: agents by workspace, a tool call or listing with its result as it comes (AgentTerminal.tsx), MCP servers and their lifecycle. */
export function AgentsPage() {
  const agents = usePoll(async (signal) => (await apiOrNull<{ items: Agent[] }>('/agents', { signal }))?.items ?? agentsFromCatalog(signal), null, []);
  const [chosen, setChosen] = useState<Agent | null>(null);
  const groups = new Map<string, Agent[]>();
  for (const a of agents.data ?? []) groups.set(a.workspace ?? 'default', [...(groups.get(a.workspace ?? 'default') ?? []), a]);
  return (
    <>
      <Section title="Agents">
        <ErrorBox error={agents.error} />
        {agents.data?.length === 0 ? <p className="muted">No agent is registered (register a playbook with metadata.agent: true).</p> : null}
        {[...groups].map(([workspace, list]) => (
          <div key={workspace} className="workspace">
            <h3>{workspace}</h3>
            <ul className="cards">
              {list.map((a) => (
                <li key={a.path}>
                  <button type="button" className={`card${chosen?.path === a.path ? ' selected' : ''}`} onClick={() => setChosen(a)} aria-pressed={chosen?.path === a.path}>
                    <strong>{a.name}</strong> <span className="muted">{a.path} v{a.version}</span>
                    {a.description ? <span>{a.description}</span> : null}
                    <span>
                      {a.scopes.map((s) => (
                        <span key={s} className="chip">
                          scope {s}
                        </span>
                      ))}
                      {a.capabilities.map((c) => (
                        <span key={c} className="chip">
                          {c}
                        </span>
                      ))}
                    </span>
                  </button>
                </li>
              ))}
            </ul>
          </div>
        ))}
        {chosen ? <AgentRun agent={chosen} key={chosen.path} /> : null}
      </Section>
      <McpServers />
    </>
  );
}

function McpServers() {
  const canOperate = useCan('operator');
  const [busy, setBusy] = useState(false);
  const servers = usePoll(
    async (signal) => {
      const list = await api<{ items: McpServer[] }>('/mcp/servers', { signal });
      setBusy(list.items.some((s) => mcpBusy(s.status)));
      return list;
    },
    busy ? MCP_BUSY_REFRESH_MS : MCP_IDLE_REFRESH_MS,
    [],
  );
  // What the console itself did last per server: a request in flight, or why one was refused.
  const [progress, setProgress] = useState<Record<string, string>>({});
  const act = async (name: string, action: string) => {
    setProgress((p) => ({ ...p, [name]: `${action}: starting…` }));
    try {
      await api<{ execution_id: string }>(`/mcp/mcp/${encodeURIComponent(name)}/lifecycle/${encodeURIComponent(action)}`, { body: {} });
      setProgress((p) => ({ ...p, [name]: '' }));
      setBusy(true);
      servers.reload();
    } catch (err) {
      setProgress((p) => ({ ...p, [name]: `${action} refused: ${err instanceof Error ? err.message : String(err)}` }));
    }
  };
  return (
    <Section title="MCP servers">
      <ErrorBox error={servers.error} />
      {servers.data?.items.length === 0 ? <p className="muted">No MCP server is registered.</p> : null}
      {servers.data?.items.length ? (
        <table className="list" aria-label="MCP servers">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Endpoint</th>
              <th scope="col">Status</th>
              <th scope="col">Last action</th>
              <th scope="col">Lifecycle</th>
            </tr>
          </thead>
          <tbody>
            {servers.data.items.map((s) => (
              <tr key={s.name} data-server={s.name}>
                <td title={s.description ?? undefined}>{s.name}</td>
                <td>
                  {s.endpoint} <span className="muted">({s.transport})</span>
                </td>
                <td>
                  <StatusBadge status={s.status} />
                </td>
                <td>
                  {s.last_action && s.last_execution_id ? (
                    <a href={href(['executions', s.last_execution_id])}>
                      {s.last_action} (execution {s.last_execution_id})
                    </a>
                  ) : (
                    <span className="muted">none</span>
                  )}
                </td>
                <td>
                  {canOperate
                    ? s.lifecycle.map((a) => (
                        <button key={a} type="button" disabled={mcpBusy(s.status)} onClick={() => void act(s.name, a)}>
                          {a}
                        </button>
                      ))
                    : null}
                  {progress[s.name] ? <span className="muted"> {progress[s.name]}</span> : null}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
    </Section>
  );
}
