import type { OutputEscaper } from './template-interpreter.ts';
import { MAX_RENDERED_CHARS, RenderFault, toText } from './template-values.ts';

// A shell task's `command` is code; what its templates output is data. Each output reaches the
// command as an environment variable the command expands where the output stood (`"$SVC_TEMPLATE_1"`
// between words, `${SVC_TEMPLATE_1}` inside double quotes or an unquoted here-document, and so on),
// never as text the shell parses: whatever a payload holds (`; rm -rf ~`, `$(id)`, a quote, a line
// break) stays one value. Where the output stands is read from the template's own text with a
// small lexer of POSIX sh quoting; a mistake of it can make an expansion stand in the wrong form
// (a wrong output), never make data syntax. Two kinds of place read a value as more than text.
// Arithmetic: bash (which is /bin/sh on some systems) evaluates a variable's value there as an
// expression, whose subscripts run command substitutions, quoted or not; so an output anywhere in
// arithmetic must be an integer: `$(( ))`, `$[ ]`, `(( ))`, `let`, `[[ ]]` with -eq and the like,
// an array subscript, a `${x:offset:length}`, an assignment once a variable has `declare -i`;
// and a variable's name (`read NAME`, `printf -v NAME`, …) must be letters, digits and _ only.
// And text the shell parses again (the arguments of eval, trap and alias, the script of sh -c):
// there an output is refused.

/** The environment variables a shell command's outputs are in: `SVC_TEMPLATE_1`, `SVC_TEMPLATE_2`, … */
export const SHELL_OUTPUT_PREFIX = 'SVC_TEMPLATE_';

/**
 * Between words (the top level, `$( )`, backticks, `[[ ]]`): the word being read (its text so far,
 * an output standing as NUL; `bare` while it holds nothing quoted or expanded), whether it stands
 * where a command's name does, and what the command it is in makes of its arguments (`let`,
 * `declare`, `eval`, `trap`, `alias`, a shell's `-c`).
 */
type Words = {
  word: string;
  bare: boolean;
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
  /** The word being read is the script of a shell's `-c`. */
  script: boolean;
};

type Context =
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
type WordsContext = Extract<Context, Words>;

type Heredoc = { delimiter: string; strip: boolean; expand: boolean };

// `<<`, `<<-`, then the delimiter word: bare, 'quoted', "quoted" or \escaped (a quoted one expands nothing).
const HEREDOC = /^<<(-?)[ \t]*(?:'([^']*)'|"([^"]*)"|\\?([A-Za-z0-9_.@%+:,/-]+))/;
const INTEGER = /^[+-]?[0-9]+$/;
const WORD_BREAK = /[\s;&|()<>]/;
/** Ends a simple command: the next word stands where a command's name does. */
const COMMAND_END = /[;&|()\n]/;
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
const OUTPUT_MARK = '\0';

/** A shell's option that takes a script (`-c`, `-ec`, …); `declare`'s that makes integers (`-i`, `-ix`, …). */
const SCRIPT_OPTION = /^-[A-Za-z]*c[A-Za-z]*$/;
const INTEGER_OPTION = /^-[A-Za-z]*i/;
/** A word that an array's list follows: `a=(`, `a+=(`. */
const ARRAY_ASSIGNMENT = /^[A-Za-z_]\w*\+?=$/;

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
/** An assignment to a prompt, which bash expands as code (`PS4` under `set -x`: its `$( )` runs). */
const PROMPT_ASSIGNMENT = /^(?:PS[0-4]|PROMPT_COMMAND)\+?=/;
/** A shell's name, as a command names it (`sh`, `/bin/bash`, …): its `-c` takes a script. */
const SHELL_NAME = /^(?:\S*\/)?(?:ba|da|z|k|mk|a|fi)?sh$/;

/** A context's word state at the start of a command (or, `commandStart` false, elsewhere). */
const words = (commandStart = true): Words => ({
  word: '',
  bare: true,
  commandStart,
  command: '',
  nameref: false,
  arrayList: false,
  redirect: false,
  optionArg: false,
  nameNext: false,
  shell: false,
  script: false,
});

/** An escaper for one shell command: its outputs' values are in `variables`, numbered in the order they came. */
export class ShellOutputs implements OutputEscaper {
  readonly wordsAlready = true;
  /** Each variable and the value it holds; a value output again reuses its variable. */
  readonly variables: Record<string, string> = {};
  #names = new Map<string, string>();
  #chars = 0;
  #stack: Context[] = [{ kind: 'plain', ...words() }];
  #pending: Heredoc[] = [];
  /** The previous character was a backslash that quotes the next one. */
  #escaped = false;
  /** The previous character ends a word (or nothing came yet): a `#` here starts a comment. */
  #wordStart = true;
  /** A variable was declared with `-i` (bash): an assignment's output is arithmetic from there on. */
  #integerVariables = false;

  literal(text: string): void {
    for (let i = 0; i < text.length; i++) i = this.#read(text, i);
  }

  output(value: unknown): string {
    const top = this.#top();
    if (this.#escaped) throw new RenderFault("a template's output in a shell command cannot follow a backslash");
    if (top.kind === 'comment') return '';
    if (top.kind === 'arith') return integer(value);
    if (top.kind === 'heredoc' && !top.expand) throw new RenderFault("a template cannot output into a here-document whose delimiter is quoted (<<'EOF'): nothing expands there");
    const text = toText(value);
    const parsedAgain = this.#stack.some((c) => {
      const w = wordsOf(c);
      return w !== undefined && (CODE_COMMANDS.has(w.command) || w.script || PROMPT_ASSIGNMENT.test(w.word));
    });
    if (parsedAgain) {
      throw new RenderFault("a template's output cannot stand in code the shell parses again (the arguments of eval, trap or alias, the script of sh -c, a prompt such as PS4): it would run as code there; pass it in env: and expand the variable in that code");
    }
    if (this.#arithmetic()) integer(text);
    if (this.#variableName() && !NAME_CHARS.test(text)) {
      throw new RenderFault("a template's output where bash reads a variable's name (read NAME, declare NAME=…, printf -v NAME, [[ -v NAME ]], a nameref's value) must be letters, digits and _ only");
    }
    const cond = this.#stack.findLast((c) => c.kind === 'cond');
    if (cond) cond.values.push(text);
    const name = this.#nameOf(text);
    this.#wordStart = false;
    const w = wordsOf(top);
    if (w) {
      w.word += OUTPUT_MARK;
      w.bare = false;
    }
    switch (top.kind) {
      case 'heredoc':
        top.line += `\${${name}}`;
        return `\${${name}}`;
      case 'double':
      case 'param':
        return `\${${name}}`;
      case 'single':
        return `'"\$${name}"'`;
      case 'ansi':
        return `'"\$${name}"$'`;
      default:
        return `"\$${name}"`;
    }
  }

  /** The variable that holds `text`; the values together are held to what a rendered string may be. */
  #nameOf(text: string): string {
    const known = this.#names.get(text);
    if (known) return known;
    this.#chars += text.length;
    if (this.#chars > MAX_RENDERED_CHARS) throw new RenderFault(`a shell command's template outputs would exceed ${MAX_RENDERED_CHARS} characters`);
    const name = `${SHELL_OUTPUT_PREFIX}${this.#names.size + 1}`;
    this.#names.set(text, name);
    this.variables[name] = text;
    return name;
  }

  #top(): Context {
    return this.#stack[this.#stack.length - 1];
  }

  /** Whether an output here is read as arithmetic by bash (see the top of this file). */
  #arithmetic(): boolean {
    return this.#stack.some((c) => {
      if (c.kind === 'arith') return true;
      if (c.kind === 'param') return PARAM_ARITH.test(c.text);
      const w = wordsOf(c);
      if (!w) return false;
      return (
        (w.kind === 'cond' && w.arith) ||
        w.command === 'let' ||
        WORD_SUBSCRIPT.test(w.word) ||
        (w.arrayList && LIST_SUBSCRIPT.test(w.word)) ||
        (this.#integerVariables && ASSIGNMENT.test(w.word))
      );
    });
  }

  /** Whether an output here stands in a variable's name, whose subscript bash would evaluate. */
  #variableName(): boolean {
    return this.#stack.some((c) => {
      const w = wordsOf(c);
      if (!w) return false;
      if (w.nameNext || (w.nameref && ASSIGNMENT.test(w.word))) return true;
      return NAME_COMMANDS.has(w.command) && !w.redirect && !w.optionArg && !w.word.includes('=') && !w.word.startsWith('-');
    });
  }

  /** Reads text[i] (and what it starts); returns the index of the last character read. */
  #read(text: string, i: number): number {
    const c = text[i];
    const top = this.#top();
    if (this.#escaped) {
      this.#escaped = false;
      if (top.kind === 'heredoc') top.line += c === '\n' ? '' : c; // a line continued
      return i;
    }
    switch (top.kind) {
      case 'single':
        if (c === "'") this.#stack.pop();
        return i;
      case 'ansi':
        if (c === '\\') this.#escaped = true;
        else if (c === "'") this.#stack.pop();
        return i;
      case 'comment':
        if (c === '\n') {
          this.#stack.pop();
          return this.#newline(i);
        }
        return i;
      case 'heredoc':
        return this.#heredocChar(top, text, i);
      case 'double':
        if (c === '"') this.#stack.pop();
        else if (c === '\\') this.#escaped = true;
        else if (c === '$' || c === '`') return this.#expansion(text, i);
        return i;
      case 'arith':
        if (c === '$' || c === '`') return this.#expansion(text, i);
        if (c === (top.close === ')' ? '(' : '[')) top.depth++;
        else if (c === top.close) {
          if (top.depth > 0) top.depth--;
          else if (top.close === ']') this.#stack.pop();
          else if (text[i + 1] === ')') {
            this.#stack.pop();
            return i + 1;
          }
        }
        return i;
      case 'param':
        top.text += c;
        if (c === '}') this.#stack.pop();
        else if (c === '\\') this.#escaped = true;
        else if (c === "'" && this.#parent().kind !== 'double') this.#stack.push({ kind: 'single' });
        else if (c === '"') this.#stack.push({ kind: 'double' });
        else if (c === '$' || c === '`') return this.#expansion(text, i);
        return i;
      default:
        return this.#plainChar(top, text, i);
    }
  }

  #parent(): Context {
    return this.#stack[this.#stack.length - 2] ?? { kind: 'plain' };
  }

  /** A character between words (top level, `$( )`, backticks, `[[ ]]`). */
  #plainChar(top: WordsContext, text: string, i: number): number {
    const c = text[i];
    const wordStart = this.#wordStart;
    this.#wordStart = WORD_BREAK.test(c);
    if (this.#wordStart) {
      const list = c === '(' && ARRAY_ASSIGNMENT.test(top.word);
      this.#endWord(top);
      if (this.#top() !== top) return this.#read(text, i); // `[[` began or `]]` ended a condition: the break is read there
      // `&` in `2>&1`, `>&2`, `&>` is part of a redirection, not the end of a command.
      const redirection = c === '<' || c === '>' || (c === '&' && (text[i - 1] === '>' || text[i - 1] === '<' || text[i + 1] === '>'));
      if (redirection) top.redirect = true;
      else if (COMMAND_END.test(c)) Object.assign(top, words(), { arrayList: list });
      if (c === '(' && text[i + 1] === '(' && top.commandStart) {
        this.#stack.push({ kind: 'arith', depth: 0, close: ')' });
        return i + 1;
      }
    } else {
      top.word += c;
      if (c === '\\' || c === "'" || c === '"' || c === '$' || c === '`') top.bare = false;
    }
    if (c === '\\') {
      this.#escaped = true;
      return i;
    }
    if (c === "'") this.#stack.push({ kind: 'single' });
    else if (c === '"') this.#stack.push({ kind: 'double' });
    else if (c === '#' && wordStart) {
      top.word = '';
      this.#stack.push({ kind: 'comment' });
    }
    else if (c === '$' || c === '`') return this.#expansion(text, i);
    else if (c === '\n') return this.#newline(i);
    else if (c === '(' && top.kind === 'subst') top.depth++;
    else if (c === ')' && top.kind === 'subst') {
      if (top.depth > 0) top.depth--;
      else this.#stack.pop();
    } else if (c === '<' && text[i + 1] === '<' && text[i + 2] === '<') {
      top.redirect = true;
      return i + 2; // bash's here-string: a word follows, no here-document
    } else if (c === '<' && text[i + 1] === '<') {
      const m = HEREDOC.exec(text.slice(i));
      if (m) {
        const quoted = m[2] !== undefined || m[3] !== undefined || m[0].includes('\\');
        this.#pending.push({ delimiter: m[2] ?? m[3] ?? m[4], strip: m[1] === '-', expand: !quoted });
        this.#wordStart = false;
        top.redirect = false; // the delimiter was the redirection's word
        return i + m[0].length - 1;
      }
    }
    return i;
  }

  /**
   * The word read in `top` ended: what it says of the words after it (a command's name, a shell's
   * `-c`, an option's argument, `[[`, `]]`, a test of numbers, `declare -i` and `-n`).
   */
  #endWord(top: WordsContext): void {
    const word = top.bare ? top.word : undefined;
    const commandStart = top.commandStart;
    // Assignments before a command's name leave its place where it was.
    if (top.word !== '') {
      const before = (word !== undefined && BEFORE_COMMAND.has(word)) || ASSIGNMENT.test(top.word);
      if (commandStart && !before && !top.redirect) top.command = word ?? '';
      top.commandStart = commandStart && before;
      top.script = false;
      top.redirect = false;
      top.optionArg = top.command === 'read' && word !== undefined && READ_OPTION_WITH_ARGUMENT.test(word);
      top.nameNext = word === '-v' && (NAME_OPTION_COMMANDS.has(top.command) || top.kind === 'cond');
    }
    top.word = '';
    top.bare = true;
    if (word === undefined) {
      top.shell = false;
      return;
    }
    if (top.shell && SCRIPT_OPTION.test(word)) top.script = true;
    else if (SHELL_NAME.test(word)) top.shell = true;
    else if (!word.startsWith('-')) top.shell = false;
    if (!commandStart && DECLARING.has(top.command) && word.startsWith('-')) {
      if (INTEGER_OPTION.test(word)) this.#integerVariables = true;
      if (NAMEREF_OPTION.test(word)) top.nameref = true;
    }
    else if (commandStart && word === '[[') this.#stack.push({ kind: 'cond', arith: false, values: [], ...words(false) });
    else if (top.kind === 'cond' && word === ']]') this.#stack.pop();
    else if (top.kind === 'cond' && ARITH_TEST.has(word)) {
      top.arith = true;
      for (const v of top.values) integer(v);
    }
  }

  /** `$…` or a backtick, wherever expansions happen. */
  #expansion(text: string, i: number): number {
    const c = text[i];
    const top = this.#top();
    if (c === '`') {
      if (top.kind === 'backtick') this.#stack.pop();
      else this.#stack.push({ kind: 'backtick', ...words() });
      return i;
    }
    const next = text[i + 1];
    if (next === '(' && text[i + 2] === '(') {
      this.#stack.push({ kind: 'arith', depth: 0, close: ')' });
      return i + 2;
    }
    if (next === '[') {
      this.#stack.push({ kind: 'arith', depth: 0, close: ']' });
      return i + 1;
    }
    if (next === '(') {
      this.#stack.push({ kind: 'subst', depth: 0, ...words() });
      this.#wordStart = true;
      return i + 1;
    }
    if (next === '{') {
      this.#stack.push({ kind: 'param', text: '' });
      return i + 1;
    }
    if (next === "'" && (top.kind === 'plain' || top.kind === 'subst' || top.kind === 'backtick')) {
      this.#stack.push({ kind: 'ansi' });
      return i + 1;
    }
    return i;
  }

  /** A line break between words: the here-documents it was waiting for begin. */
  #newline(i: number): number {
    this.#wordStart = true;
    const w = wordsOf(this.#top());
    if (w) Object.assign(w, words());
    const next = this.#pending.shift();
    if (next) this.#stack.push({ kind: 'heredoc', ...next, line: '' });
    return i;
  }

  /** A character of a here-document's body: a line that is its delimiter ends it. */
  #heredocChar(top: Extract<Context, { kind: 'heredoc' }>, text: string, i: number): number {
    const c = text[i];
    if (c === '\n') {
      const line = top.strip ? top.line.replace(/^\t+/, '') : top.line;
      top.line = '';
      if (line === top.delimiter) {
        this.#stack.pop();
        // The next here-document of the same line, if any, begins.
        const next = this.#pending.shift();
        if (next) this.#stack.push({ kind: 'heredoc', ...next, line: '' });
      }
      return i;
    }
    if (top.expand && c === '\\') this.#escaped = true;
    top.line += c;
    return i;
  }
}

/** An output in arithmetic: its text when an integer, else the render fails. */
function integer(value: unknown): string {
  const text = toText(value).trim();
  if (!INTEGER.test(text)) throw new RenderFault("a template's output in shell arithmetic ($(( )), (( )), let, [[ -eq ]], a subscript or a ${x:offset}) must be an integer");
  return text;
}

function wordsOf(c: Context): WordsContext | undefined {
  return c.kind === 'plain' || c.kind === 'subst' || c.kind === 'backtick' || c.kind === 'cond' ? c : undefined;
}
