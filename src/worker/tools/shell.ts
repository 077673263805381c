import * as v from 'valibot';
import { SHELL_ENV_NAME } from '../../dsl/playbook.schema.ts';
import { CappedBuffer } from './capped-buffer.ts';
import { aborted, fail, invalidTask, ok } from './outcome.ts';
import { spawnInGroup, type GroupChild } from './spawn-in-group.ts';
import type { RenderedTask, TaskOutcome, ToolContext } from './types.ts';

/** Bytes kept of each of stdout and stderr; the rest is counted and noted, not stored. */
export const SHELL_OUTPUT_LIMIT_BYTES = 1024 * 1024;

// An environment value is text: rendered data reaches the command through the environment, never
// through its text, so whatever it holds stays data. No value (null) leaves the variable unset.
const envText = (value: unknown): string | undefined => {
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return JSON.stringify(value);
};
// A process's arguments and environment cannot hold NUL; say so instead of failing to spawn.
const NO_NUL = 'text without NUL characters';
const withoutNul = v.check((text: string) => !text.includes('\0'), NO_NUL);
const ShellTaskSchema = v.looseObject({
  command: v.pipe(v.string(), v.nonEmpty(), withoutNul),
  env: v.optional(v.nullable(v.record(v.pipe(v.string(), v.regex(SHELL_ENV_NAME, 'a variable name (letters, digits, _)')), v.pipe(v.unknown(), v.transform(envText), v.check((text) => text === undefined || !text.includes('\0'), NO_NUL))))),
  cwd: v.optional(v.nullable(v.pipe(v.string(), v.nonEmpty(), withoutNul))),
  stdin: v.optional(v.nullable(v.string())),
});

export type ShellData = { exit_code: number | null; stdout: string; stderr: string };

/**
 * Runs `command` with `/bin/sh -c` (env merged onto the worker's, values as text, lists and
 * mappings as JSON; optional cwd and stdin); data `{exit_code, stdout, stderr}`, each stream capped
 * at SHELL_OUTPUT_LIMIT_BYTES. A non-zero exit is an `exit_code` error. The command runs in its
 * own process group (spawnInGroup): on abort the group gets SIGTERM, then SIGKILL; when the
 * command ends or the worker dies, it is killed.
 */
export async function shell(task: RenderedTask, ctx: ToolContext): Promise<TaskOutcome> {
  const parsed = v.safeParse(ShellTaskSchema, task);
  if (!parsed.success) return invalidTask('shell', parsed.issues);
  const { command, env, cwd, stdin } = parsed.output;
  if (ctx.signal.aborted) return aborted(ctx.signal);

  // The worker's own settings (SVC_*: encryption key, database URL) are not the task's business.
  const childEnv: Record<string, string | undefined> = {};
  for (const [name, value] of Object.entries(ctx.env)) if (!name.startsWith('SVC_')) childEnv[name] = value;
  for (const [name, value] of Object.entries(env ?? {})) childEnv[name] = value ?? undefined;

  return new Promise<TaskOutcome>((resolve) => {
    let group: GroupChild;
    try {
      group = spawnInGroup(command, { cwd: cwd ?? undefined, env: childEnv });
    } catch (error) {
      // Node's message may quote the environment (values can be secrets): name the code only.
      const code = error instanceof Error && 'code' in error ? String(error.code) : 'unknown error';
      return resolve(fail('spawn', `cannot start the shell (${code})`));
    }
    const { child } = group;
    const stdout = new CappedBuffer(SHELL_OUTPUT_LIMIT_BYTES);
    const stderr = new CappedBuffer(SHELL_OUTPUT_LIMIT_BYTES);
    child.stdout.on('data', (chunk: Buffer) => stdout.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => stderr.push(chunk));
    // A command that never reads its stdin closes the pipe: EPIPE here is not a task failure.
    child.stdin.on('error', () => {});
    child.stdin.end(stdin ?? undefined);

    let settled = false;
    const finish = (outcome: TaskOutcome) => {
      if (settled) return;
      settled = true;
      ctx.signal.removeEventListener('abort', onAbort);
      resolve(outcome);
    };
    const data = (exitCode: number | null): ShellData => ({ exit_code: exitCode, stdout: stdout.text(), stderr: stderr.text() });

    const onAbort = () => {
      group.stop();
      // A grandchild that left the group may still hold the pipes; do not wait for them.
      child.stdout.destroy();
      child.stderr.destroy();
      finish(aborted(ctx.signal, data(null)));
    };
    ctx.signal.addEventListener('abort', onAbort, { once: true });

    child.on('error', (error) => {
      finish(fail('spawn', `cannot start the shell${cwd ? ` in ${cwd}` : ''}: ${error.message}`));
    });
    child.on('close', (code, signal) => {
      if (code === 0) return finish(ok(data(0)));
      const message = code === null ? `command killed by signal ${signal ?? 'unknown'}` : `command exited with code ${code}`;
      finish(fail('exit_code', message, data(code)));
    });
  });
}
