// The agents terminal's run: a tool call (or a listing of the tools) sent to an agent as the MCP
// runtime expects it, and each MCP call of the execution as it ends: the tool's result, or why it failed.
import { useRef, useState } from 'react';
import { EVENT } from '../../../machines/event-types.ts';
import { isTerminalExecutionStatus } from '../../../machines/statuses.ts';
import { api, type Execution, type ExecutionEvent } from '../api.ts';
import { usePoll } from '../hooks.ts';
import { newIdempotencyKey } from '../idempotency-key.ts';
import { href } from '../route.ts';
import { useCan } from '../session.ts';
import { ErrorBox, JsonView, StatusBadge } from '../ui.tsx';

/** One item of GET /api/agents. */
export type Agent = { path: string; catalog_id: number; version: number; name: string; workspace: string | null; scopes: string[]; capabilities: string[]; description: string | null };

/** The two methods an `mcp` task knows (src/worker/tools/mcp.ts). */
type McpMethod = 'tools/list' | 'tools/call';
/** A tool as `tools/list` answers it. */
type McpTool = { name: string; description?: string; inputSchema?: { properties?: Record<string, { type?: unknown }>; required?: string[] } };
/** An MCP content item of a call result. */
type McpContent = { type: string; text?: string };

/** One `mcp` task of the run as its command events report it; `data` is the MCP result (kept when the tool said isError). */
type ToolCall = { key: string; step: string | null; task: string; status: 'ok' | 'failed'; data: unknown; error: string | null };

const RUN_REFRESH_MS = 500;
const EVENTS_PAGE = 1000;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const errorText = (e: unknown): string | null => (e == null ? null : isObject(e) && typeof e.message === 'string' ? e.message : JSON.stringify(e));

/**
 * The run's MCP calls, from its events: `call.done`/`call.error` name each `mcp` task of a command
 * (by `seq`), and that command's `command.completed`/`command.failed` carries each task's data and error.
 */
export function toolCalls(events: ExecutionEvent[]): ToolCall[] {
  const mcpTasks = new Map<number, Set<string>>();
  for (const e of events) {
    const c = e.context;
    if (!e.event_type.startsWith('call.') || !isObject(c) || c.kind !== 'mcp' || typeof c.seq !== 'number' || typeof c.task !== 'string') continue;
    mcpTasks.set(c.seq, (mcpTasks.get(c.seq) ?? new Set()).add(c.task));
  }
  const calls: ToolCall[] = [];
  for (const e of events) {
    if (e.event_type !== EVENT.commandCompleted && e.event_type !== EVENT.commandFailed) continue;
    const seq = isObject(e.context) ? e.context.seq : undefined;
    const tasks = isObject(e.result) && isObject(e.result.tasks) ? e.result.tasks : {};
    for (const task of typeof seq === 'number' ? (mcpTasks.get(seq) ?? []) : []) {
      const t = isObject(tasks[task]) ? tasks[task] : {};
      // A failed command without a per-task record (it never reported one) failed this task too.
      const error = errorText(t.error) ?? (e.event_type === EVENT.commandFailed && !isObject(tasks[task]) ? errorText(e.error) : null);
      const failed = error !== null || t.status === 'error' || (isObject(t.data) && t.data.isError === true);
      calls.push({ key: `${e.event_id}/${task}`, step: e.step, task, status: failed ? 'failed' : 'ok', data: t.data, error });
    }
  }
  return calls;
}

/** An arguments object for `tool` with each property of its input schema at a neutral value. */
function argumentsSkeleton(tool: McpTool): Record<string, unknown> {
  const neutral: Record<string, unknown> = { number: 0, integer: 0, string: '', boolean: false, array: [], object: {} };
  const props = tool.inputSchema?.properties ?? {};
  return Object.fromEntries(Object.entries(props).map(([k, s]) => [k, typeof s?.type === 'string' && s.type in neutral ? neutral[s.type] : null]));
}

/** The run form of one agent and the output of its last run. */
export function AgentRun({ agent }: { agent: Agent }) {
  const canOperate = useCan('operator');
  const [tool, setTool] = useState('');
  const [args, setArgs] = useState('{}');
  // One key a run: a double click on Run called the tool twice (two executions); a new key once answered.
  const [key, setKey] = useState(newIdempotencyKey);
  const [run, setRun] = useState<{ id: number; method: McpMethod; tool: string | null } | null>(null);
  const [listed, setListed] = useState<McpTool[]>([]);
  const [error, setError] = useState<unknown>();
  let problem: string | null = null;
  try {
    const v: unknown = JSON.parse(args);
    if (!isObject(v)) problem = 'arguments must be a JSON object';
  } catch (e) {
    problem = e instanceof Error ? e.message : String(e);
  }
  // Tool names to offer: the agent's capabilities that are not MCP methods, then what a listing found.
  const suggestions = [...new Set([...agent.capabilities.filter((c) => !c.startsWith('tools/')), ...listed.map((t) => t.name)])];

  // The workload the agent runtime reads (examples/agents/mcp-agent.yaml, `svc agent run`): method, tool, arguments.
  const start = async (method: McpMethod) => {
    setError(undefined);
    try {
      const name = tool.trim();
      const workload: Record<string, unknown> = method === 'tools/call' ? { method, tool: name, arguments: JSON.parse(args) } : { method };
      const out = await api<{ execution_id: number }>('/execute', { body: { path: agent.path, resource_kind: 'agent', workload }, headers: { 'idempotency-key': `${key}-${method === 'tools/call' ? 'call' : 'list'}` } });
      setKey(newIdempotencyKey());
      setRun({ id: out.execution_id, method, tool: method === 'tools/call' ? name : null });
    } catch (err) {
      setError(err);
    }
  };
  const useTool = (t: McpTool) => {
    setTool(t.name);
    setArgs(JSON.stringify(argumentsSkeleton(t)));
    setKey(newIdempotencyKey());
  };
  return (
    <div className="terminal" aria-label={`Run ${agent.name}`}>
      <h3>Run {agent.name}</h3>
      {canOperate ? (
        <form
          className="stack"
          onSubmit={(e) => {
            e.preventDefault();
            void start('tools/call');
          }}
        >
          <label>
            Tool <input value={tool} onChange={(e) => {
                  setTool(e.target.value);
                  setKey(newIdempotencyKey());
                }} list={`tools-${agent.path}`} placeholder="the tool to call, e.g. one of List tools" />
          </label>
          <datalist id={`tools-${agent.path}`}>
            {suggestions.map((s) => (
              <option key={s} value={s} />
            ))}
          </datalist>
          <label>
            Arguments (JSON)
            <textarea rows={3} className="code" value={args} onChange={(e) => {
                setArgs(e.target.value);
                setKey(newIdempotencyKey());
              }} spellCheck={false} />
          </label>
          {problem ? <p className="error">{problem}</p> : null}
          <div className="control-group">
            <button type="submit" disabled={problem !== null || !tool.trim()} title={tool.trim() ? undefined : 'give the tool to call'}>
              Run
            </button>
            <button type="button" onClick={() => void start('tools/list')}>
              List tools
            </button>
          </div>
        </form>
      ) : (
        <p className="muted">Running agents needs the operator role.</p>
      )}
      <ErrorBox error={error} />
      {run ? <RunOutput key={run.id} id={run.id} asked={run.method === 'tools/call' ? `tools/call ${run.tool}` : 'tools/list'} onTools={setListed} onUse={canOperate ? useTool : undefined} /> : null}
    </div>
  );
}

/**
 * The run as it goes: its steps' events as they arrive, then each MCP call with its result or
 * error. The run shows failed when its execution failed or any of its tool calls did (a playbook
 * that handles the error may still complete).
 */
function RunOutput({ id, asked, onTools, onUse }: { id: number; asked: string; onTools: (tools: McpTool[]) => void; onUse?: (tool: McpTool) => void }) {
  const [done, setDone] = useState(false);
  const events = useRef<ExecutionEvent[]>([]);
  const out = usePoll(
    async (signal) => {
      const execution = await api<Execution>(`/executions/${id}`, { signal });
      // New events only (the log is append-only); read after the execution, so a finished one has them all.
      for (;;) {
        const since = events.current.at(-1)?.event_id ?? 0;
        const page = await api<{ events: ExecutionEvent[] }>(`/events/${id}?since_event_id=${since}&limit=${EVENTS_PAGE}`, { signal });
        events.current = [...events.current, ...page.events];
        if (page.events.length < EVENTS_PAGE) break;
      }
      const calls = toolCalls(events.current);
      if (isTerminalExecutionStatus(execution.status)) {
        setDone(true);
        const tools = calls.flatMap((c) => (isObject(c.data) && Array.isArray(c.data.tools) ? (c.data.tools as McpTool[]) : []));
        if (tools.length) onTools(tools);
      }
      return { execution, events: events.current, calls };
    },
    done ? null : RUN_REFRESH_MS,
    [id, done],
  );
  if (!out.data) return <ErrorBox error={out.error} />;
  const { execution, events: log, calls } = out.data;
  const ended = isTerminalExecutionStatus(execution.status);
  const callFailed = calls.some((c) => c.status === 'failed');
  const status = ended && callFailed ? 'failed' : execution.status;
  return (
    <div className="run-output" aria-live="polite" data-status={status}>
      <p>
        <code>{asked}</code> · <a href={href(['executions', id])}>Execution {id}</a> <StatusBadge status={status} />
        {status !== execution.status ? <span className="muted"> (a tool call failed; the execution {execution.status})</span> : null}
      </p>
      <ol className="log">
        {log
          .filter((e) => e.event_type.startsWith('step.') || e.event_type.startsWith('call.') || e.event_type.startsWith('command.'))
          .map((e) => (
            <li key={e.event_id}>
              {e.event_type} {e.step ?? ''}
            </li>
          ))}
      </ol>
      {calls.length ? (
        <ol className="calls" aria-label="MCP calls">
          {calls.map((c) => (
            <CallOutput key={c.key} call={c} onUse={onUse} />
          ))}
        </ol>
      ) : ended ? (
        <JsonView label="Result" value={execution.result} open />
      ) : null}
      {ended && execution.status === 'failed' && !callFailed ? <ErrorBox error={execution.error} /> : null}
    </div>
  );
}

/** One MCP call: a listing as a table of tools, a call result as its text and structured content, a failure as its error and what the tool said. */
function CallOutput({ call, onUse }: { call: ToolCall; onUse?: (tool: McpTool) => void }) {
  const data = isObject(call.data) ? call.data : null;
  const tools = data && Array.isArray(data.tools) ? (data.tools as McpTool[]) : null;
  const content = data && Array.isArray(data.content) ? (data.content as McpContent[]) : [];
  const text = content.map((c) => (c.type === 'text' && typeof c.text === 'string' ? c.text : `[${c.type}]`)).join('\n');
  return (
    <li className={`call call-${call.status}`} data-status={call.status}>
      <p>
        MCP call <code>{call.task}</code>
        {call.step ? <span className="muted"> in step {call.step}</span> : null} <StatusBadge status={call.status} />
      </p>
      {call.error ? (
        <p className="error" role="alert">
          {call.error}
        </p>
      ) : null}
      {tools ? (
        <table className="list" aria-label="Listed tools">
          <thead>
            <tr>
              <th scope="col">Tool</th>
              <th scope="col">Description</th>
              <th scope="col">Arguments</th>
              {onUse ? <th scope="col" aria-label="Use" /> : null}
            </tr>
          </thead>
          <tbody>
            {tools.map((t) => (
              <tr key={t.name}>
                <td>
                  <code>{t.name}</code>
                </td>
                <td>{t.description ?? ''}</td>
                <td>{Object.keys(t.inputSchema?.properties ?? {}).join(', ')}</td>
                {onUse ? (
                  <td>
                    <button type="button" onClick={() => onUse(t)}>
                      Use {t.name}
                    </button>
                  </td>
                ) : null}
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
      {text ? (
        <pre className="tool-output" aria-label={`Output of ${call.task}`}>
          {text}
        </pre>
      ) : null}
      {data && data.structuredContent !== undefined ? <JsonView label="Structured content" value={data.structuredContent} open /> : null}
      {data && !tools ? <JsonView label="MCP result" value={data} /> : null}
      {!data && call.data != null ? <JsonView label="Result" value={call.data} open /> : null}
    </li>
  );
}
