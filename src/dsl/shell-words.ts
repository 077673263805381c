import { RenderFault, toText } from './template-values.ts';

// What bash makes of a shell command's words, for the escaper of its template outputs
// (./shell-outputs.ts, which reads the quoting and keeps the contexts below on a stack): where a
// command's name stands and which it is, its options and redirections, and so the places that
// read a value as more than text. Arithmetic: bash (which is /bin/sh on some systems) evaluates a
// variable's value there as an expression, whose subscripts run command substitutions, quoted or
// not; so an output anywhere in arithmetic must be an integer: `$(( ))`, `$[ ]`, `(( ))`, `let`,
// `[[ ]]` with -eq and the like, an array subscript, a `${x:offset:length}`, an assignment once a
// variable has `declare -i`. A variable's name (`read NAME`, `printf -v NAME`, …) must be letters,
// digits and _ only. And in text the shell parses again (the arguments of eval, trap and alias,
// the script of sh -c, a prompt) an output is refused.

/**
 * Between words (the top level, `$( )`, backticks, `[[ ]]`): the word being read (its text so far,
 * an output standing as NUL; `bare` while it holds nothing quoted or expanded), whether it stands
 * where a command's name does, and what the command it is in makes of its arguments (`let`,
 * `declare`, `eval`, `trap`, `alias`, a shell's `-c`).
 */
export type Words = {
  word: string;
  bare: boolean;
  /**
   * The word's text as the shell reads it once its quotes are removed (`"sh"`, `s\h`, `'eval'` are
   * `sh` and `eval`), or null once it holds an expansion or an output: what names a command or an
   * option, which quoting does not change (only reserved words such as `[[` must be bare).
   */
  unquoted: string | null;
  commandStart: boolean;
  /** The command's name, once read ('' before it, or when it is not plain text): `let`, `eval`, `declare`, … say what its arguments are. */
  command: string;
  /** The command declares with `-n`: its assignments' values are names (namerefs). */
  nameref: boolean;
  arrayList: boolean;
  /** The word being read follows `<` or `>`: a file, a here-string. */
  redirect: boolean;
  /** The word being read is an option's argument (`read -p PROMPT`). */
  optionArg: boolean;
  /** The word being read is a variable's name (`printf -v NAME`, `[[ -v NAME ]]`). */
  nameNext: boolean;
  /** A shell's name came in this command: its `-c` option may follow. */
  shell: boolean;
  /** A shell's `-c` came and its script did not yet: the next word that is no option is the script. */
  script: boolean;
  /** The word being read is the argument of a shell's option (`-o pipefail`, `-O extglob`, `--rcfile FILE`), not its script or a file. */
  shellOptionArg: boolean;
};

export type Context =
  | ({ kind: 'plain' } & Words)
  | ({ kind: 'subst'; depth: number } & Words) // $( … ): plain, until its `)`
  | ({ kind: 'backtick' } & Words)
  // [[ … ]]: plain, until the word `]]`; arithmetic once a word like -eq is in it, which the
  // outputs before it (`values`) must then have been fit for.
  | ({ kind: 'cond'; arith: boolean; values: string[] } & Words)
  | { kind: 'arith'; depth: number; close: ')' | ']' } // $(( … )), (( … )), $[ … ]
  | { kind: 'param'; text: string } // ${ … }, its text so far
  | { kind: 'single' }
  | { kind: 'ansi' } // bash's $' … '
  | { kind: 'double' }
  | { kind: 'comment' }
  | { kind: 'heredoc'; delimiter: string; strip: boolean; expand: boolean; line: string };

/** The contexts between words, which read words. */
export type WordsContext = Extract<Context, Words>;

const INTEGER = /^[+-]?[0-9]+$/;
/** Ends a simple command: the next word stands where a command's name does. */
export const COMMAND_END = /[;&|()\n]/;
/** Words after which a command's name may still come. */
const BEFORE_COMMAND = new Set(['if', 'then', 'else', 'elif', 'while', 'until', 'do', 'for', '!', 'time', '{', 'builtin', 'command']);
/** Builtins that parse their arguments as code: `eval` now, `trap` at its signal, `alias` where it is used. */
const CODE_COMMANDS = new Set(['eval', 'trap', 'alias']);
/** Commands whose `-i` option makes a variable whose assignments are arithmetic. */
const DECLARING = new Set(['declare', 'typeset', 'local', 'export', 'readonly']);
const ARITH_TEST = new Set(['-eq', '-ne', '-lt', '-le', '-gt', '-ge']);
/** A `${…}` whose text so far ends inside a subscript, or in a substring's offset or length. */
const PARAM_ARITH = /^[!#]?(?:[A-Za-z_]\w*|\d+|[@*])(?:\[[^\]]*$|(?:\[[^\]]*\])?:(?![-=?+]))/;
/** A word whose text so far ends inside a subscript: `a[…` (and `[…` in an array's list, `a=([…]=x)`). */
const WORD_SUBSCRIPT = /^[A-Za-z_]\w*\[[^\]]*$/;
const LIST_SUBSCRIPT = /^\[[^\]]*$/;
const ASSIGNMENT = /^[A-Za-z_]\w*(?:\[[^\]]*\])?\+?=/;
/** Where an output stands in a word's text (for the patterns above). */
export const OUTPUT_MARK = '\0';

/** A shell's option that takes a script (`-c`, `-ec`, …); `declare`'s that makes integers (`-i`, `-ix`, …). */
const SCRIPT_OPTION = /^-[A-Za-z]*c[A-Za-z]*$/;
/** A shell's options that take the next word as their argument: `-o pipefail`, `-eo pipefail`, `+o posix`, `-O extglob`, `--rcfile FILE`. */
const SHELL_OPTION_WITH_ARGUMENT = /^(?:[-+][A-Za-z]*[oO]|--rcfile|--init-file)$/;
/** A shell's option: `-e`, `--norc`, and the `+e` that turns one off. */
const isShellOption = (name: string): boolean => name.startsWith('-') || name.startsWith('+');
const INTEGER_OPTION = /^-[A-Za-z]*i/;
/** A word that an array's list follows: `a=(`, `a+=(`. */
export const ARRAY_ASSIGNMENT = /^[A-Za-z_]\w*\+?=$/;

/**
 * Commands that take variables' names as arguments (before any `=`), which bash evaluates the
 * subscript of (`read 'a[$(id)]'` runs id); `read`'s options that take an argument instead.
 */
const NAME_COMMANDS = new Set(['read', 'declare', 'typeset', 'local']);
const READ_OPTION_WITH_ARGUMENT = /^-[A-Za-z]*[dinNptu]$/;
/** Commands whose `-v` option names a variable (and `[[ -v ]]`). */
const NAME_OPTION_COMMANDS = new Set(['printf', 'test', '[']);
const NAMEREF_OPTION = /^-[A-Za-z]*n/;
/** What a variable's name may hold. */
const NAME_CHARS = /^\w*$/;
/**
 * The variables whose value a shell expands as code: a prompt (`PS4` under `set -x`: its `$( )`
 * runs), or the start-up file a shell expands the name of (`BASH_ENV=… bash script.sh`, `ENV` of
 * an interactive one), command substitutions and all. Assigned in a command or set in `env:`.
 */
const CODE_VARIABLES = 'PS[0-4]|PROMPT_COMMAND|BASH_ENV|ENV';
export const CODE_VARIABLE = new RegExp(`^(?:${CODE_VARIABLES})$`);
const PROMPT_ASSIGNMENT = new RegExp(`^(?:${CODE_VARIABLES})\\+?=`);
/** A shell's name, as a command names it (`sh`, `/bin/bash`, …): its `-c` takes a script. */
const SHELL_NAME = /^(?:\S*\/)?(?:ba|da|z|k|mk|a|fi)?sh$/;

/** A context's word state at the start of a command (or, `commandStart` false, elsewhere). */
export const words = (commandStart = true): Words => ({
  word: '',
  bare: true,
  unquoted: '',
  commandStart,
  command: '',
  nameref: false,
  arrayList: false,
  redirect: false,
  optionArg: false,
  nameNext: false,
  shell: false,
  script: false,
  shellOptionArg: false,
});

/**
 * Refuses an output at the top of `stack` (its text `text`) where bash would read it as more than
 * text: in code parsed again, in arithmetic (unless an integer), in a variable's name (unless
 * letters, digits and _). Throws RenderFault.
 */
export function checkPlace(stack: readonly Context[], integerVariables: boolean, text: string): void {
  const parsedAgain = stack.some((c) => {
    const w = wordsOf(c);
    return w !== undefined && (CODE_COMMANDS.has(w.command) || w.script || PROMPT_ASSIGNMENT.test(w.word));
  });
  if (parsedAgain) {
    throw new RenderFault("a template's output cannot stand in code the shell parses again (the arguments of eval, trap or alias, the script of sh -c, a prompt such as PS4, BASH_ENV): it would run as code there; pass it in env: and expand the variable in that code");
  }
  if (inArithmetic(stack, integerVariables)) integer(text);
  if (atVariableName(stack) && !NAME_CHARS.test(text)) {
    throw new RenderFault("a template's output where bash reads a variable's name (read NAME, declare NAME=…, printf -v NAME, [[ -v NAME ]], a nameref's value) must be letters, digits and _ only");
  }
}

/** Whether an output at the top of `stack` is read as arithmetic by bash. */
function inArithmetic(stack: readonly Context[], integerVariables: boolean): boolean {
  return stack.some((c) => {
    if (c.kind === 'arith') return true;
    if (c.kind === 'param') return PARAM_ARITH.test(c.text);
    const w = wordsOf(c);
    if (!w) return false;
    return (
      (w.kind === 'cond' && w.arith) ||
      w.command === 'let' ||
      WORD_SUBSCRIPT.test(w.word) ||
      (w.arrayList && LIST_SUBSCRIPT.test(w.word)) ||
      (integerVariables && ASSIGNMENT.test(w.word))
    );
  });
}

/** Whether an output at the top of `stack` stands in a variable's name, whose subscript bash would evaluate. */
function atVariableName(stack: readonly Context[]): boolean {
  return stack.some((c) => {
    const w = wordsOf(c);
    if (!w) return false;
    if (w.nameNext || (w.nameref && ASSIGNMENT.test(w.word))) return true;
    return NAME_COMMANDS.has(w.command) && !w.redirect && !w.optionArg && !w.word.includes('=') && !w.word.startsWith('-');
  });
}

/**
 * The word read in `top` ended: what it says of the words after it (a command's name, a shell's
 * `-c`, an option's argument, `[[` and `]]` on `stack`, a test of numbers, `declare -n`); true
 * when it declared integer variables (`declare -i`), whose assignments are arithmetic from then on.
 */
export function endWord(top: WordsContext, stack: Context[]): boolean {
  const word = top.bare ? top.word : undefined;
  // A command's or an option's name is the same quoted or not: `"sh" -c`, `'eval'`, `sh "-c"`.
  const name = top.unquoted ?? undefined;
  const commandStart = top.commandStart;
  // `sh -c -e SCRIPT`, `sh -c -- SCRIPT`: options between `-c` and its script leave it coming.
  const scriptComing = top.script;
  // `bash -o pipefail -c SCRIPT`: an option's argument leaves the shell's `-c` to come.
  const shellOptionArg = top.shellOptionArg;
  // Assignments before a command's name leave its place where it was.
  if (top.word !== '') {
    const before = (word !== undefined && BEFORE_COMMAND.has(word)) || ASSIGNMENT.test(top.word);
    if (commandStart && !before && !top.redirect) top.command = name ?? '';
    top.commandStart = commandStart && before;
    top.script = false;
    top.shellOptionArg = false;
    top.redirect = false;
    top.optionArg = top.command === 'read' && name !== undefined && READ_OPTION_WITH_ARGUMENT.test(name);
    top.nameNext = name === '-v' && (NAME_OPTION_COMMANDS.has(top.command) || top.kind === 'cond');
  }
  top.word = '';
  top.bare = true;
  top.unquoted = '';
  if (top.shell && shellOptionArg) {
    // `sh -co errexit SCRIPT`: the script still comes after the option's argument.
    top.script = scriptComing;
    return false;
  }
  if (name === undefined) {
    top.shell = false;
    return false;
  }
  if (top.shell && (SCRIPT_OPTION.test(name) || (scriptComing && isShellOption(name)))) top.script = true;
  else if (SHELL_NAME.test(name)) top.shell = true;
  else if (!isShellOption(name)) top.shell = false;
  if (top.shell && SHELL_OPTION_WITH_ARGUMENT.test(name)) top.shellOptionArg = true;
  if (!commandStart && DECLARING.has(top.command) && name.startsWith('-')) {
    if (NAMEREF_OPTION.test(name)) top.nameref = true;
    return INTEGER_OPTION.test(name);
  }
  if (word === undefined) return false;
  if (commandStart && word === '[[') stack.push({ kind: 'cond', arith: false, values: [], ...words(false) });
  else if (top.kind === 'cond' && word === ']]') stack.pop();
  else if (top.kind === 'cond' && ARITH_TEST.has(word)) {
    top.arith = true;
    for (const v of top.values) integer(v);
  }
  return false;
}

/** An output in arithmetic: its text when an integer, else the render fails. */
export function integer(value: unknown): string {
  const text = toText(value).trim();
  if (!INTEGER.test(text)) throw new RenderFault("a template's output in shell arithmetic ($(( )), (( )), let, [[ -eq ]], a subscript or a ${x:offset}) must be an integer");
  return text;
}

/** The context's word state, when it reads words. */
export function wordsOf(c: Context): WordsContext | undefined {
  return c.kind === 'plain' || c.kind === 'subst' || c.kind === 'backtick' || c.kind === 'cond' ? c : undefined;
}
