import type { OutputEscaper } from './template-interpreter.ts';
import { MAX_RENDERED_CHARS, RenderFault, toText } from './template-values.ts';
import { ARRAY_ASSIGNMENT, checkPlace, COMMAND_END, endWord, integer, OUTPUT_MARK, words, wordsOf, type Context, type WordsContext } from './shell-words.ts';

// A shell task's `command` is code; what its templates output is data. Each output reaches the
// command as an environment variable the command expands where the output stood (`"$SVC_TEMPLATE_1"`
// between words, `${SVC_TEMPLATE_1}` inside double quotes or an unquoted here-document, and so on),
// never as text the shell parses: whatever a payload holds (`; rm -rf ~`, `$(id)`, a quote, a line
// break) stays one value. Where the output stands is read from the template's own text with a
// small lexer of POSIX sh quoting; a mistake of it can make an expansion stand in the wrong form
// (a wrong output), never make data syntax. What bash makes of the words, and so where an output
// is refused or must be an integer or a name, is ./shell-words.ts.

/** The environment variables a shell command's outputs are in: `SVC_TEMPLATE_1`, `SVC_TEMPLATE_2`, … */
export const SHELL_OUTPUT_PREFIX = 'SVC_TEMPLATE_';

type Heredoc = { delimiter: string; strip: boolean; expand: boolean };

// `<<`, `<<-`, then the delimiter word: bare, 'quoted', "quoted" or \escaped (a quoted one expands nothing).
const HEREDOC = /^<<(-?)[ \t]*(?:'([^']*)'|"([^"]*)"|\\?([A-Za-z0-9_.@%+:,/-]+))/;
const WORD_BREAK = /[\s;&|()<>]/;
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
    checkPlace(this.#stack, this.#integerVariables, text);
    const cond = this.#stack.findLast((c) => c.kind === 'cond');
    if (cond) cond.values.push(text);
    const name = this.#nameOf(text);
    this.#wordStart = false;
    const w = wordsOf(top);
    if (w) {
      w.word += OUTPUT_MARK;
      w.bare = false;
    }
    this.#unquoted(null);
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

  /** Reads text[i] (and what it starts); returns the index of the last character read. */
  #read(text: string, i: number): number {
    const c = text[i];
    const top = this.#top();
    if (this.#escaped) {
      this.#escaped = false;
      if (top.kind === 'heredoc') top.line += c === '\n' ? '' : c; // a line continued
      // In double quotes a backslash quotes only $ ` " \ and a line break; elsewhere any character.
      else if (c !== '\n') this.#unquoted(top.kind === 'double' && !'$`"\\'.includes(c) ? `\\${c}` : c);
      return i;
    }
    switch (top.kind) {
      case 'single':
        if (c === "'") this.#stack.pop();
        else this.#unquoted(c);
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
        else if (c === '$' || c === '`') {
          this.#unquoted(null);
          return this.#expansion(text, i);
        } else this.#unquoted(c);
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

  /** Adds to the unquoted text of the word being read (in the nearest context that reads words); null: it holds an expansion. */
  #unquoted(text: string | null): void {
    const w = this.#stack.findLast((c) => wordsOf(c) !== undefined);
    const words = w && wordsOf(w);
    if (!words) return;
    words.unquoted = text === null || words.unquoted === null ? null : words.unquoted + text;
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
      if (endWord(top, this.#stack)) this.#integerVariables = true;
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
      if (c === '$' || c === '`') top.unquoted = null;
      else if (c !== '\\' && c !== "'" && c !== '"' && top.unquoted !== null) top.unquoted += c;
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
