// Random shell commands built from the constructs the lexer reads (quotes, substitutions,
// here-documents, arithmetic, bash's names, eval, sh -c, …) with templates anywhere, each
// rendered with a payload that tries to run `touch MARK`, then run in the real /bin/sh and bash
// as the wrapper runs them: whatever a render lets through, no payload runs. (With the renderer
// of `bd84b49`, before bash's arithmetic, eval, sh -c and the like were read, some ran theirs.)
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { renderShellCommand, TemplateError } from '../../../src/dsl/render.ts';

const dir = mkdtempSync(join(tmpdir(), 'svc-shell-fuzz-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const SHELLS = ['/bin/sh', ...(existsSync('/bin/bash') ? ['/bin/bash'] : [])];
const COMMANDS = 1_000;
const PIECES = [
  'echo ', 'printf "%s" ', '"', "'", '$(', ')', '`', '${X:-', '${X:', '${a[', '}', '$((', '))', '<<EOF\n', '\nEOF\n', "<<'EOF'\n", '<<-E\n',
  '\n\tE\n', '#', '\n', ';', '|', '&&', ' ', ' ', ' ', 'let ', '(( ', ' ))', '[[ ', ' ]]', ' -eq ', 'a[', ']', '=', 'read ', 'eval ', 'sh -c ',
  'trap ', 'PS4=', 'declare ', '-i ', '-n ', '\\', 'x', '<<<', '$[', "$'", 'for (( ', 'do ', 'done', 'if ', 'then ', 'fi', 'case ', ' in ', 'esac',
  '(', '{ ', ' }', 'f() ', 'local ', 'printf -v ', 'test -v ', 'bash -c ', 'alias ', '2>&1 ', '> /dev/null ', 'X=1 ', 'cat ', '$X', '${#X}', 'a=(',
  '[0]=',
];

/** A fixed sequence (the same commands every run): a linear congruential generator. */
function random(seed: number): () => number {
  let s = seed;
  return () => (s = (s * 1103515245 + 12345) % 2147483648) / 2147483648;
}

describe("a shell command's outputs, wherever random commands put them", () => {
  it(`run no payload in ${SHELLS.join(' or ')} (${COMMANDS} commands)`, () => {
    const rnd = random(20261127);
    const pick = <T>(a: readonly T[]): T => a[Math.floor(rnd() * a.length)];
    const ran: string[] = [];
    let rendered = 0;
    for (let n = 0; n < COMMANDS; n++) {
      let template = '';
      for (let k = 2 + Math.floor(rnd() * 12); k > 0; k--) template += rnd() < 0.3 ? '{{ v }}' : pick(PIECES);
      if (!template.includes('{{ v }}')) template += '{{ v }}';
      const mark = join(dir, `m${n}`);
      const v = pick([
        `$(touch ${mark})`, `\`touch ${mark}\``, `a[$(touch ${mark})]`, `'; touch ${mark}; '`, `"; touch ${mark}; "`, `\ntouch ${mark}\n`,
        `EOF\ntouch ${mark}\nEOF\n`, `E\ntouch ${mark}\n`, `x;touch ${mark}`, `$'\\ntouch ${mark}'`, `)touch ${mark}`, `}; touch ${mark}; {`,
        `))); touch ${mark}`,
      ]);
      let r: { command: string; env: Record<string, string> };
      try {
        r = renderShellCommand(template, { v }, 'start.t.command');
      } catch (err) {
        expect(err, template).toBeInstanceOf(TemplateError); // refused: nothing runs
        continue;
      }
      rendered++;
      // As the task's wrapper does (src/worker/tools/shell-argv.ts): the outputs are the shell's own variables.
      const assigns = Object.entries(r.env).map(([k, value]) => `${k}='${value.replaceAll("'", "'\\''")}'`).join('\n');
      for (const shell of SHELLS) {
        spawnSync(shell, ['-c', `${assigns}\neval "$SVC_CMD"`], { env: { PATH: process.env.PATH, SVC_CMD: r.command, HOME: dir }, input: '', timeout: 2_000 });
        if (existsSync(mark)) {
          ran.push(`${shell}: ${JSON.stringify(template)} with ${JSON.stringify(v)} => ${JSON.stringify(r.command)}`);
          rmSync(mark);
        }
      }
    }
    expect(ran).toEqual([]);
    expect(rendered).toBeGreaterThan(COMMANDS / 3); // most commands render: the test runs them
  }, 120_000);
});
