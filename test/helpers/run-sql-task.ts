// A playbook of one postgres task without auth, run to its end: what the service-database tests
// (the reader role, SVC_ALLOW_SERVICE_DB_TASKS) send.
import { randomBytes } from 'node:crypto';
import type { ExecutionApi } from './execution-api.ts';

/** Registers `command` as a playbook's one postgres task (read_only, and timeout_seconds when given, as asked), runs it and returns the finished execution. */
export async function runSqlTask(api: Pick<ExecutionApi, 'register' | 'run' | 'wait'>, command: string, readOnly: boolean, timeoutSeconds?: number) {
  const path = `sql/probe_${randomBytes(4).toString('hex')}`;
  await api.register(
    [
      'apiVersion: svc/v1',
      'kind: Playbook',
      `metadata: { name: sql_probe, path: ${path} }`,
      'workflow:',
      '  - step: start',
      '    tool:',
      '      - name: q',
      '        kind: postgres',
      `        read_only: ${readOnly}`,
      `        command: ${JSON.stringify(command)}`,
      ...(timeoutSeconds === undefined ? [] : [`        timeout_seconds: ${timeoutSeconds}`]),
    ].join('\n') + '\n',
  );
  return api.wait(await api.run(path), 30_000);
}
