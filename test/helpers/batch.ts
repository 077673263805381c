import { asWorker } from './auth.ts';
import { http, type Json } from './http.ts';
import { until } from './until.ts';

/** What tests of the batch intake do over HTTP. */
export type BatchApi = {
  /** Claims a command as `worker` (POST /api/commands/{id}/claim); returns it as a worker gets it. */
  claim(commandId: number, worker: string): Promise<Json>;
  /** POST /api/events/batch; the raw answer. */
  post(body: unknown, headers?: Record<string, string>): Promise<{ status: number; body: Json; headers: Headers }>;
  status(requestId: string): Promise<Json>;
  /** Polls the status until the batch is completed or failed. */
  settled(requestId: string, timeoutMs?: number): Promise<Json>;
};

export function batchApi(url: string): BatchApi {
  return {
    async claim(commandId, worker) {
      const r = await http(url, 'POST', `/api/commands/${commandId}/claim`, { worker_id: worker }, asWorker);
      if (r.status !== 200) throw new Error(`claim failed: ${r.status} ${JSON.stringify(r.body)}`);
      return r.body;
    },
    post: (body, headers = {}) => http(url, 'POST', '/api/events/batch', body, headers),
    async status(requestId) {
      const r = await http(url, 'GET', `/api/events/batch/${requestId}/status`);
      if (r.status !== 200) throw new Error(`status failed: ${r.status} ${JSON.stringify(r.body)}`);
      return r.body;
    },
    async settled(requestId, timeoutMs = 20_000) {
      return until(
        `batch ${requestId} to settle`,
        async () => {
          const s = (await http(url, 'GET', `/api/events/batch/${requestId}/status`)).body;
          return s.state === 'completed' || s.state === 'failed' ? s : undefined;
        },
        timeoutMs,
      );
    },
  };
}

/** A worker's report of a command that ran its one task `t` to completion, as a batch's events. */
export function commandReport(cmd: Json, data: unknown = 'done'): Json[] {
  const base = { command_id: cmd.command_id, attempt: cmd.attempt, step: cmd.step };
  return [
    { ...base, event_type: 'command.started', context: { loop_index: cmd.loop_index } },
    { ...base, event_type: 'call.done', context: { task: 't', kind: 'noop' } },
    { ...base, event_type: 'command.completed', result: { tasks: { t: { status: 'ok', data } } } },
  ];
}

/** A playbook at `path` of `steps` sequential steps, each one noop task `t`. */
export function noopPlaybook(path: string, steps: number): string {
  const lines = ['apiVersion: svc/v1', 'kind: Playbook', `metadata: { name: ${path.replace(/\W/g, '_')}, path: ${path} }`, 'workflow:'];
  for (let i = 1; i <= steps; i++) {
    lines.push(`  - step: s${i}`, '    tool: { name: t, kind: noop }');
    if (i < steps) lines.push(`    next: s${i + 1}`);
  }
  return lines.join('\n') + '\n';
}
