// A shell command's template outputs are data wherever they stand: each rendered command runs in
// the real /bin/sh (and bash, when the machine has it) with the outputs' variables, prints every
// hostile value exactly as it is, and creates no file.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { renderShellCommand, TemplateError } from '../../../src/dsl/render.ts';

const dir = mkdtempSync(join(tmpdir(), 'svc-shell-outputs-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const SHELLS = ['/bin/sh', ...(existsSync('/bin/bash') ? ['/bin/bash'] : [])];

const hostile = [
  `x; touch ${dir}/semicolon`,
  `$(touch ${dir}/subst)`,
  `\`touch ${dir}/backtick\``,
  `'; touch ${dir}/single; echo '`,
  `"; touch ${dir}/double; echo "`,
  `a\ntouch ${dir}/newline`,
  `EOF\ntouch ${dir}/heredoc\nEOF`,
  `} $(touch ${dir}/brace)`,
  "\\",
  "it's",
  '*',
  'a  b',
  '$HOME',
  '',
  '{{ 7 * 7 }}',
];

const SEPARATOR = '<<next value>>';

/** What `template` prints in `shell` for each of `values`: all in one script (a process start is slow), each render's variables renamed apart. */
function runEach(shell: string, template: string, values: readonly unknown[]): string[] {
  const env: Record<string, string> = {};
  const parts = values.map((value, k) => {
    const r = renderShellCommand(template, { v: value }, 'start.t.command');
    for (const [name, text] of Object.entries(r.env)) env[name.replace('SVC_TEMPLATE_', `SVC_TEMPLATE_${k}_`)] = text;
    return `(\n${r.command.replaceAll('SVC_TEMPLATE_', `SVC_TEMPLATE_${k}_`)}\n)\nprintf '%s' '${SEPARATOR}'`;
  });
  const script = parts.join('\n');
  // Standard input not a socket and HOME a directory of its own: bash whose standard input is a
  // socket (Node's pipes are socketpairs) thinks rshd ran it and sources ~/.bashrc, the machine's.
  const r = spawnSync(shell, ['-c', script], { env: { PATH: process.env.PATH, HOME: dir, ...env }, stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8' });
  expect(r.status, `${shell} -c ${script}: ${r.stderr}`).toBe(0);
  return r.stdout.split(SEPARATOR).slice(0, values.length);
}

const run = (shell: string, template: string, value: unknown): string => runEach(shell, template, [value])[0];

// Each test runs a real shell per case (dozens in the bash-place tests): seconds on a slow or
// busy machine, past vitest's 5 s default (a CI run on a 2-core VM under load took 13 s).
const SHELL_TESTS_TIMEOUT_MS = 60_000;

describe('a shell command\'s outputs', { timeout: SHELL_TESTS_TIMEOUT_MS }, () => {
  const forms: [string, string, (v: string) => string][] = [
    ['between words', "printf '%s|' {{ v }}", (v) => `${v}|`],
    ['part of a word', "printf '%s|' pre{{ v }}post", (v) => `pre${v}post|`],
    ['in double quotes', 'printf \'%s|\' "pre {{ v }} post"', (v) => `pre ${v} post|`],
    ['in single quotes', "printf '%s|' 'pre {{ v }} post'", (v) => `pre ${v} post|`],
    ['in a command substitution', 'printf \'%s|\' "$(printf \'%s\' {{ v }})"', (v) => `${v.replace(/\n+$/, '')}|`],
    ['in a parameter expansion', 'printf \'%s|\' "${NOT_SET:-{{ v }}}"', (v) => `${v}|`],
    ['in a here-document', 'cat <<EOF\n[{{ v }}]\nEOF\nprintf done', (v) => `[${v}]\ndone`],
    ['in an indented here-document', 'cat <<-END\n\t[{{ v }}]\n\tEND\nprintf done', (v) => `[${v}]\ndone`],
    ['in a comment', '# {{ v }}\nprintf ok', () => 'ok'],
    ['after a loop', "{% for i in [1, 2] %}printf '%s|' {{ v }}; {% endfor %}", (v) => `${v}|${v}|`],
    ['through quote', "printf '%s|' {{ v | quote }}", (v) => `${v}|`],
    // Words that are arithmetic only where a command's name stands, or after `declare -i`.
    ['after let as an argument', "printf '%s|' let {{ v }}", (v) => `let|${v}|`],
    ['in an assignment', "x={{ v }}; printf '%s|' \"$x\"", (v) => `${v}|`],
    ['as an argument after the script of sh -c', `sh -c 'printf "%s|" "$1"' sh {{ v }}`, (v) => `${v}|`],
    ['after eval as an argument', "printf '%s|' eval trap {{ v }}", (v) => `eval|trap|${v}|`],
  ];
  for (const [where, template, expected] of forms) {
    it(`stand ${where} as data, in ${SHELLS.join(' and ')}`, () => {
      for (const shell of SHELLS) {
        const printed = runEach(shell, template, hostile);
        hostile.forEach((v, i) => expect(printed[i], `${shell}: ${JSON.stringify(v)}`).toBe(expected(v)));
      }
      expect(readdirSync(dir)).toEqual([]);
    });
  }

  it('never reach the text of the command: it names variables, which hold the values', () => {
    const r = renderShellCommand("echo {{ v }} \"{{ v }}\" '{{ v }}'", { v: '$(id)' }, 'f');
    expect(r.command).toBe(`echo "$SVC_TEMPLATE_1" "\${SVC_TEMPLATE_1}" ''"$SVC_TEMPLATE_1"''`);
    expect(r.env).toEqual({ SVC_TEMPLATE_1: '$(id)' });
    expect(renderShellCommand('echo plain', {}, 'f')).toEqual({ command: 'echo plain', env: {} });
    // Lists and mappings as JSON, numbers and booleans as text, none as nothing.
    expect(renderShellCommand('echo {{ a }} {{ b }} {{ c }} {{ d }}', { a: [1, 'x'], b: 2.5, c: true, d: null }, 'f').env).toEqual({
      SVC_TEMPLATE_1: '[1,"x"]',
      SVC_TEMPLATE_2: '2.5',
      SVC_TEMPLATE_3: 'true',
      SVC_TEMPLATE_4: '',
    });
  });

  it('are held together to what one rendered string may be', () => {
    const big = 'x'.repeat(600_000);
    expect(Object.keys(renderShellCommand('echo {{ a }} {{ a }} {{ a }}', { a: big }, 'f').env)).toEqual(['SVC_TEMPLATE_1']);
    expect(() => renderShellCommand('echo {{ a }} {{ b }}', { a: big, b: `${big}y` }, 'start.t.command')).toThrow(/would exceed 1048576 characters/);
  });

  it('in arithmetic are integers, else the render fails', () => {
    for (const shell of SHELLS) expect(run(shell, 'echo $(( {{ v }} * 2 ))', 21)).toBe('42\n');
    expect(run('/bin/sh', 'echo $(( {{ v }} + 1 ))', ' 7 ')).toBe('8\n');
    for (const v of ['a[$(id)]', '1;id', 'x', '1.5']) {
      expect(() => renderShellCommand('echo $(( {{ v }} * 2 ))', { v }, 'start.t.command')).toThrow(TemplateError);
    }
    expect(() => renderShellCommand('echo $(( 1 + {{ v }} ))', { v: 'HOME' }, 'start.t.command')).toThrow(/must be an integer/);
  });

  // bash (/bin/sh on some systems) evaluates a variable's value in arithmetic as an expression:
  // `a[$(cmd)]` runs cmd there, quoted or not. Each of its arithmetic places takes integers only.
  const bashArithmetic: [string, string][] = [
    ['(( {{ v }} > 1 )) && echo yes', 'yes'],
    ['if (( "{{ v }}" > 1 )); then echo yes; fi', 'yes'],
    ['for (( i={{ v }}; i<9; i++ )); do printf %s $i; done; echo', '78'],
    ['let x={{ v }}+1; echo $x', '8'],
    ['let "x = {{ v }} + 1"; echo $x', '8'],
    ['let y=$(echo {{ v }}); echo $y', '7'],
    ['echo $[ {{ v }} + 1 ]', '8'],
    ['[[ {{ v }} -eq 7 ]] && echo yes', 'yes'],
    ['[[ 7 -le "{{ v }}" && a == a ]] && echo yes', 'yes'],
    ['a=(); a[{{ v }}]=x; echo ${!a[@]}', '7'],
    ['a=([{{ v }}]=x); echo ${!a[@]}', '7'],
    ['a=(0 1 2 3 4 5 6 7 8); echo "${a[{{ v }}]}"', '7'],
    ['x=abcdefghij; echo "${x:{{ v }}}" "${x:1:{{ v }}}"', 'hij bcdefgh'],
    ['declare -i n; n={{ v }}+1; echo $n', '8'],
  ];
  /**
   * Each template run in real bash with `good` prints what it should; each of `bad` fails its
   * render with `refusal` (and so runs nothing); the `data` templates take a hostile value.
   */
  function bashPlaces(cases: [string, string][], good: unknown, bad: string[], refusal: RegExp, data: string[]): void {
    const marker = join(dir, 'bash-place');
    for (const [template, printed] of cases) {
      if (SHELLS.includes('/bin/bash')) expect(run('/bin/bash', template, good), template).toBe(`${printed}\n`);
      for (const v of [`a[$(touch ${marker})]`, ...bad]) {
        expect(() => renderShellCommand(template, { v }, 'start.t.command'), `${template} with ${v}`).toThrow(refusal);
      }
    }
    for (const template of data) expect(() => renderShellCommand(template, { v: `a[$(touch ${marker})]` }, 'start.t.command'), template).not.toThrow();
    expect(existsSync(marker)).toBe(false);
  }

  it("in bash's arithmetic are integers, else the render fails", () => {
    // Not arithmetic: a string test, a default, a word after `let` that is no command's name, a comment.
    const data = ['[[ "{{ v }}" == x ]] || echo "${NOT_SET:-{{ v }}}"', 'echo let {{ v }}', 'echo "(( {{ v }} ))"', 'let x=1 # {{ v }}'];
    bashPlaces(bashArithmetic, 7, ['x', '1;id', '$(id)', 'HOME'], /must be an integer/, data);
  });

  it('after a here-string are commands again, not a here-document', () => {
    if (!SHELLS.includes('/bin/bash')) return;
    expect(runEach('/bin/bash', "cat <<< x{{ v }}\nprintf '%s|' {{ v }}", hostile)).toEqual(hostile.map((v) => `x${v}\n${v}|`));
  });

  // bash evaluates the subscript of a variable's name too: `read 'a[$(cmd)]'` runs cmd.
  const bashNames: [string, string][] = [
    ['read {{ v }} <<< hi; echo "$x_1"', 'hi'],
    ['read -r -d "" {{ v }} <<< hi; echo "$x_1"', 'hi'],
    ['read -a {{ v }} <<< "a b"; echo "${x_1[1]}"', 'b'],
    ['declare {{ v }}=5; echo "$x_1"', '5'],
    ['f() { local "{{ v }}=6"; echo "$x_1"; }; f', '6'],
    ['y=7; declare -n r={{ v }}; x_1=8; echo "$r"', '8'],
    ['printf -v {{ v }} %s 9; echo "$x_1"', '9'],
    ['x_1=; [[ -v {{ v }} ]] && echo set', 'set'],
    ['x_1=; test -v "{{ v }}" && echo set', 'set'],
    ['read z 2>&1 {{ v }} <<< "p q"; echo "$x_1"', 'q'],
    ['read <<EOF {{ v }}\nhi\nEOF\necho "$x_1"', 'hi'],
  ];
  it("in bash's variable names are names, else the render fails", () => {
    // A prompt, a here-string, a value, a printf argument, a word after `read` that is no command's name.
    const data = ['read -p "{{ v }}" x <<< y', 'read x <<< {{ v }}', 'declare x={{ v }}', 'printf -v x %s {{ v }}', 'echo read {{ v }}', '[ -n "{{ v }}" ]'];
    bashPlaces(bashNames, 'x_1', ['x y', '$(id)'], /where bash reads a variable's name/, data);
  });

  it('cannot stand in code the shell parses again: the arguments of eval, trap and alias, the script of sh -c', () => {
    for (const template of [
      "trap 'echo {{ v }}' EXIT",
      'PS4="+ {{ v }} "; set -x',
      "export PS4='{{ v }}'",
      "alias say='echo {{ v }}'",
      'eval "echo {{ v }}"',
      'eval echo {{ v }}',
      "builtin eval 'echo {{ v }}'",
      "sh -c 'echo {{ v }}'",
      'bash -c "echo {{ v }}"',
      "/bin/bash -ec 'echo {{ v }}' x",
      "env bash --norc -c 'echo {{ v }}'",
      "echo 1 | xargs sh -c 'echo {{ v }}'",
      'x=1; if true; then sh -c "$(echo {{ v }})"; fi',
      // A command's or an option's name is the same to the shell quoted or not; options may come between -c and its script.
      '"sh" -c "echo {{ v }}"',
      "s\\h -c 'echo {{ v }}'",
      "'eval' \"echo {{ v }}\"",
      'e"va"l "echo {{ v }}"',
      'sh "-c" "echo {{ v }}"',
      'sh -c -- "echo {{ v }}"',
      'bash -c -e "echo {{ v }}"',
      '\\eval "echo {{ v }}"',
    ]) {
      expect(() => renderShellCommand(template, { v: 'x' }, 'start.t.command'), template).toThrow(/the shell parses again .* pass it in env:/);
    }
  });

  it('reads a quoted command name as the shell does, and leaves the arguments after a -c script as data', () => {
    for (const template of ["sh -c 'echo \"$1\"' sh {{ v }}", '"echo" {{ v }}', "sh -c -- 'echo \"$1\"' sh {{ v }}", 'e"cho" "{{ v }}"']) {
      expect(() => renderShellCommand(template, { v: 'x' }, 'start.t.command'), template).not.toThrow();
    }
  });

  it('cannot go where nothing expands or where a backslash would take them', () => {
    expect(() => renderShellCommand("cat <<'EOF'\n{{ v }}\nEOF", { v: 'x' }, 'start.t.command')).toThrow(/here-document whose delimiter is quoted/);
    expect(() => renderShellCommand('echo \\{{ v }}', { v: 'x' }, 'start.t.command')).toThrow(/cannot follow a backslash/);
    expect(() => renderShellCommand('echo {{ v }}', { v: 'x' }, 'start.t.command')).not.toThrow();
  });
});
