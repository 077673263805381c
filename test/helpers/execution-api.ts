import { isTerminalExecutionStatus } from '../../machines/statuses.ts';
import { http, type Json } from './http.ts';

/** What tests do with executions over the API of a test server. */
export type ExecutionApi = {
  /** Registers a playbook (YAML text) and returns its catalog answer. */
  register(yaml: string): Promise<Json>;
  /** Starts an execution and returns its id. */
  run(path: string, payload?: Record<string, unknown>): Promise<number>;
  /** Polls until the execution is terminal; returns its status object. */
  wait(executionId: number, timeoutMs?: number): Promise<Json>;
  /** Every event of the execution, in order. */
  events(executionId: number): Promise<Json[]>;
};

/** The ExecutionApi of the server at `url`; every call throws on an unexpected answer. */
export function executionApi(url: string): ExecutionApi {
  return {
    async register(yaml) {
      const r = await http(url, 'POST', '/api/catalog/playbook', { content: yaml });
      if (r.status !== 201) throw new Error(`register failed: ${r.status} ${JSON.stringify(r.body)}`);
      return r.body;
    },
    async run(path, payload = {}) {
      const r = await http(url, 'POST', '/api/run/playbook', { path, payload });
      if (r.status !== 200) throw new Error(`run failed: ${r.status} ${JSON.stringify(r.body)}`);
      return r.body.execution_id;
    },
    async wait(id, timeoutMs = 20_000) {
      const until = Date.now() + timeoutMs;
      for (;;) {
        const r = await http(url, 'GET', `/api/executions/${id}`);
        if (r.status !== 200) throw new Error(`execution ${id}: ${r.status} ${JSON.stringify(r.body)}`);
        if (isTerminalExecutionStatus(String(r.body.status))) return r.body;
        if (Date.now() > until) throw new Error(`execution ${id} still running after ${timeoutMs} ms: ${JSON.stringify(r.body)}`);
        await new Promise((ok) => setTimeout(ok, 25));
      }
    },
    async events(id) {
      const all: Json[] = [];
      // Pages through the whole log: a long loop has more events than one page holds.
      for (let since = 0; ; ) {
        const page = (await http(url, 'GET', `/api/events/${id}?since_event_id=${since}&limit=1000`)).body;
        all.push(...page.events);
        if (page.events.length < 1000) return all;
        since = page.next_since_event_id;
      }
    },
  };
}
