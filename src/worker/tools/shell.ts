import * as v from 'valibot';
import { CappedBuffer } from './capped-buffer.ts';
import { aborted, fail, invalidTask, ok } from './outcome.ts';
import { spawnInGroup } from './spawn-in-group.ts';
import type { RenderedTask, TaskOutcome, ToolContext } from './types.ts';

/** Bytes kept of each of stdout and stderr; the rest is counted and noted, not stored. */
export const SHELL_OUTPUT_LIMIT_BYTES = 1024 * 1024;

const Scalar = v.pipe(v.union([v.string(), v.number(), v.boolean()]), v.transform(String));
const ShellTaskSchema = v.looseObject({
  command: v.pipe(v.string(), v.nonEmpty()),
  env: v.optional(v.nullable(v.record(v.string(), v.nullable(Scalar)))),
  cwd: v.optional(v.nullable(v.pipe(v.string(), v.nonEmpty()))),
  stdin: v.optional(v.nullable(v.string())),
});

export type ShellData = { exit_code: number | null; stdout: string; stderr: string };

/**
 * Runs `command` with `/bin/sh -c` (env merged onto the worker's, optional cwd and stdin); data
 * `{exit_code, stdout, stderr}`, each stream capped at SHELL_OUTPUT_LIMIT_BYTES. A non-zero exit
 * is an `exit_code` error. The command runs in its own process group (spawnInGroup): on abort
 * the group gets SIGTERM, then SIGKILL; when the command ends or the worker dies, it is killed.
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
    const group = spawnInGroup(command, { cwd: cwd ?? undefined, env: childEnv });
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
