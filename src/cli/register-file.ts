// Registering a playbook file from the CLI, as `svc run FILE` and `svc catalog register FILE` both
// do: the server's answer printed the one way (warnings and problems at file:line:col).
import * as v from 'valibot';
import { ServerError } from '../worker/server-client.ts';
import { problemLines, warningLines } from './located-lines.ts';
import { describeServerError, problemsDetail } from './describe-server-error.ts';
import type { ResourceType, RunApi } from './run-api.ts';

type Out = { write(text: string): unknown };

/**
 * Registers `content` (read from `file`) as `resourceType`; writes its warnings to `err` as
 * `file:line:col: warning:` and, unless `quiet`, what became of it to `out`. Throws ServerError
 * (see refusalText) and the api's errors.
 */
export async function registerFile(api: RunApi, file: string, content: string, out: Out, err: Out, quiet: boolean, resourceType: ResourceType = 'playbook') {
  const reg = await api.register(content, resourceType);
  if (reg.warnings?.length) err.write(warningLines(file, content, reg.warnings));
  if (!quiet) out.write(reg.unchanged ? `${reg.path} version ${reg.version} unchanged (${file})\n` : `registered ${reg.path} version ${reg.version} from ${file}\n`);
  return reg;
}

/** The problems of a refused registration (path, message, line, column), none when the server named none. */
export function refusalProblems(e: ServerError) {
  const located = v.safeParse(problemsDetail, e.detail);
  return located.success ? (located.output.problems ?? []) : [];
}

/** What to print for a registration the server refused: its problems at `file:line:col`, else its message. */
export function refusalText(command: string, file: string, e: ServerError): string {
  const located = v.safeParse(problemsDetail, e.detail);
  if (e.status === 400 && located.success && located.output.problems?.length) {
    return `svc ${command}: the server rejected ${file}: ${located.output.message ?? 'invalid playbook'}\n${problemLines(file, located.output.problems)}`;
  }
  return `svc ${command}: the server rejected ${file}: ${describeServerError(e, e.status === 400)}\n`;
}
