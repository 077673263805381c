// The everyday idioms of shell scripts, through a real `svc worker`, sandboxed (the default) and
// with SVC_SHELL_SANDBOX=off: its home and /tmp, temporary files, the date, UTF-8 text, a here-doc,
// the system's description (/etc/os-release), its user's name, bash where a script wants pipefail.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Json } from '../../helpers/http.ts';
import { startWorkerStack, type WorkerStack } from '../../helpers/worker-process.ts';

describe.each<{ mode: string; workerEnv: Record<string, string> }>([
  { mode: 'sandboxed', workerEnv: {} },
  { mode: 'unsandboxed', workerEnv: { SVC_SHELL_SANDBOX: 'off' } },
])('a $mode shell task of a real worker', ({ mode, workerEnv }) => {
  let s: WorkerStack;
  beforeAll(async () => {
    s = await startWorkerStack({ workers: 1, concurrency: 2, workerEnv });
    await s.register(`
apiVersion: svc/v1
kind: Playbook
metadata: { name: idioms, path: idioms/run }
workflow:
  - step: start
    tool: { name: run, kind: shell, command: 'eval "$CMD"', env: { CMD: "{{ workload.cmd }}" }, timeout_seconds: 60 }
`);
  }, 120_000);
  afterAll(async () => s?.close());

  async function attempt(cmd: string): Promise<Json> {
    return s.wait(await s.run('idioms/run', { cmd }), 60_000);
  }

  it('has a home, a /tmp, temporary files, the date and UTF-8 text, and runs a script of several lines with a here-doc', async () => {
    const script = [
      'cd "$HOME" && test -w . && echo home-ok',
      'cd /tmp && echo x > f && cat f && cd - > /dev/null',
      'f=$(mktemp) && echo temp > "$f" && cat "$f" && rm "$f"',
      'date +%Y | grep -q "^20" && echo date-ok',
      "printf 'héllo ✓ %s\\n' 'ünï'",
      'python3 -c "print(\'py é ✓\')"',
      'cat <<EOT',
      'here $((6 * 7))',
      'EOT',
    ].join('\n');
    const done = await attempt(script);
    expect(done).toMatchObject({ status: 'completed', result: { stdout: 'home-ok\nx\ntemp\ndate-ok\nhéllo ✓ ünï\npy é ✓\nhere 42\n', stderr: '' } });
  });

  it('knows its user by name (a root worker runs each sandboxed task as a user of its own, `task` inside)', async () => {
    const done = await attempt('u=$(whoami) && test "$u" = "$(id -un)" && python3 -c "import os, pwd; print(pwd.getpwuid(os.getuid()).pw_name)" | grep -qx "$u" && echo "user $u"');
    expect(done).toMatchObject({ status: 'completed', result: { stdout: expect.stringMatching(/^user \S+\n$/), stderr: '' } });
    if (mode === 'sandboxed' && process.getuid?.() === 0) expect(done.result.stdout).toBe('user task\n');
  });

  it('tells the system it runs on, and runs bash for pipefail', async () => {
    const done = await attempt('. /etc/os-release && test -n "$ID" && echo "os-ok"; bash -c \'set -euo pipefail; false | true\' || echo pipefail-ok');
    expect(done).toMatchObject({ status: 'completed', result: { stdout: 'os-ok\npipefail-ok\n', stderr: '' } });
  });
});
