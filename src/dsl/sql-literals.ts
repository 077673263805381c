import type { OutputEscaper } from './template-interpreter.ts';
import { RenderFault, toText } from './template-values.ts';

// A postgres task's `command` is code; what its templates output is data. Bind `params` ($1, $2)
// are the way to pass values; a template in the command is written as a literal where it stands:
// between tokens a quoted string ('it''s'), a number as itself, true/false/null as TRUE, FALSE,
// NULL; inside a string literal its quotes doubled (and backslashes, in an E'' string); inside a
// quoted identifier its double quotes doubled. So an output can never end a literal and start
// SQL. Where a literal cannot stand (a dollar-quoted string, most often a DO block's or a
// function's code; a comment), it is refused, as it is in a quoted string that is itself code: a
// DO block's body and a function's or procedure's `AS '…'` (quotes doubled once there are SQL
// again when the body runs), and COPY … PROGRAM's command (a shell's).
// The postgres tool's sessions run with standard_conforming_strings on, which this relies on: a
// backslash in a plain '' string is then an ordinary character.
// PostgreSQL continues a string that a `'` follows at once, or after white space holding a line
// break (and `--` comments): `E'a'\n'b'` is one E'' string, whose backslashes escape in every
// part. So a part of such a continuation, a literal or an output, is read (and written) in the
// mode of the string it continues, and a COPY … PROGRAM command stays one across its parts.

/** What a quoted string is run as: nothing (data), a shell command (COPY … PROGRAM '…'), or SQL or PL code (DO '…', CREATE FUNCTION … AS '…'). */
type Runs = 'program' | 'code' | null;

type Context =
  | { kind: 'plain' }
  // closing: a `'` just read, which `''` would undo; runs: what PostgreSQL runs the string as
  | { kind: 'string'; backslashes: boolean; closing: boolean; runs: Runs }
  | { kind: 'ident' }
  | { kind: 'dollar'; tag: string }
  | { kind: 'line' }
  | { kind: 'block'; depth: number };

/** A string just ended, which a `'` may still continue: at once (`adjacent`), or past a line break (`newline`). */
type Ended = { backslashes: boolean; runs: Runs; adjacent: boolean; newline: boolean };

const DOLLAR_TAG = /^\$(?:[A-Za-z_\u0080-\uffff][A-Za-z0-9_\u0080-\uffff]*)?\$/;
const IDENTIFIER_CHAR = /[A-Za-z0-9_$\u0080-\uffff]/;
/** Words a statement's head is read to (CREATE OR REPLACE FUNCTION): a routine's is within its first four. */
const HEAD_WORDS = 4;
const ROUTINE = /^(?:FUNCTION|PROCEDURE)$/;
/** CREATE [OR REPLACE] FUNCTION|PROCEDURE: a statement whose AS is followed by the routine's body. */
const isRoutineHead = (head: readonly string[]): boolean =>
  head[0] === 'CREATE' && (ROUTINE.test(head[1] ?? '') || (head[1] === 'OR' && head[2] === 'REPLACE' && ROUTINE.test(head[3] ?? '')));

const REFUSED: Record<Exclude<Runs, null>, string> = {
  program: "a template cannot output into the command of COPY … PROGRAM: PostgreSQL's server runs it as a shell command",
  code: "a template cannot output into the quoted body of a DO block or of a function or procedure (… AS '…'): PostgreSQL runs that string as code; pass the value in params ($1) or write it outside",
};

/** An escaper for one SQL command of a postgres task. */
export class SqlLiterals implements OutputEscaper {
  readonly wordsAlready = false;
  #context: Context = { kind: 'plain' };
  /** The last two characters of the command so far: what comes before a quote or an output. */
  #tail = '  ';
  /** Between tokens: the word being read, and the last token before it (a word, or a character). */
  #word = '';
  #lastToken = '';
  /** The string that ended last, while PostgreSQL may still continue it. */
  #ended: Ended | undefined;
  /** The statement's first words (upper case, HEAD_WORDS at most), and whether a routine's AS was read in it. */
  #head: string[] = [];
  #routineAs = false;

  literal(text: string): void {
    const full = this.#tail + text;
    for (let i = this.#tail.length; i < full.length; i++) i = this.#read(full, i);
    this.#tail = full.slice(-2);
  }

  output(value: unknown): string {
    const continued = this.#continuing();
    const out = this.#written(value, continued);
    this.#tail = (this.#tail + out).slice(-2);
    if (this.#context.kind === 'plain') {
      // Between tokens an output is a literal: a token of its own, a string a `'` may continue.
      this.#endToken("'");
      this.#ended = out.endsWith("'") ? { backslashes: continued?.backslashes ?? false, runs: continued?.runs ?? null, adjacent: true, newline: false } : undefined;
    }
    return out;
  }

  /** The string an output between tokens here would continue, if any. */
  #continuing(): Ended | undefined {
    this.#settled();
    const ended = this.#ended;
    return this.#context.kind === 'plain' && ended && (ended.adjacent || ended.newline) ? ended : undefined;
  }

  #written(value: unknown, continued: Ended | undefined): string {
    const ctx = this.#settled();
    // Between tokens an output is a string literal, which in such a place would be run too.
    const runs = ctx.kind === 'string' ? ctx.runs : ctx.kind === 'plain' ? (continued ? continued.runs : this.#runsHere(this.#word || this.#lastToken)) : null;
    if (runs) throw new RenderFault(REFUSED[runs]);
    const text = typeof value === 'number' || typeof value === 'boolean' || value === null || value === undefined ? null : toText(value);
    if (text?.includes('\0')) throw new RenderFault("a template's output in SQL cannot hold a NUL character");
    switch (ctx.kind) {
      case 'string':
        return (ctx.backslashes ? (text ?? toText(value)).replaceAll('\\', '\\\\') : text ?? toText(value)).replaceAll("'", "''");
      case 'ident':
        return (text ?? toText(value)).replaceAll('"', '""');
      case 'dollar':
        // A dollar-quoted string is most often code (a DO block's, a function's body), where the
        // value would be written as SQL: nothing can be written there as data.
        throw new RenderFault(`a template cannot output into a dollar-quoted string ($${ctx.tag}$) in SQL: it is code in a DO block or a function's body; pass the value in params ($1) or write it outside`);
      case 'line':
      case 'block':
        throw new RenderFault("a template cannot output into a comment in SQL");
      case 'plain': {
        if (value === null || value === undefined) return 'NULL';
        if (typeof value === 'boolean') return value ? 'TRUE' : 'FALSE';
        if (typeof value === 'number') {
          if (!Number.isFinite(value)) throw new RenderFault(`a template's output in SQL is not a finite number: ${value}`);
          // In parentheses when negative: `x-{{ n }}` must not become the comment `x--1`.
          return value < 0 || Object.is(value, -0) ? `(${value})` : String(value);
        }
        // A space keeps a word before it from prefixing the literal (E'…', B'…', U&'…' read it otherwise).
        const lead = IDENTIFIER_CHAR.test(this.#tail[1]) ? ' ' : '';
        // Continuing an E'' string, its backslashes escape too.
        const escaped = continued?.backslashes ? text!.replaceAll('\\', '\\\\') : text!;
        return `${lead}'${escaped.replaceAll("'", "''")}'`;
      }
    }
  }

  /**
   * What a string opened here, after the token `before`, is run as: a shell command after the word
   * PROGRAM (`COPY t FROM PROGRAM 'cmd'`); code anywhere in a DO statement (its body, or a
   * language named as a string) and after a routine's AS (`CREATE FUNCTION … AS 'body'`, or the
   * C form's `AS 'file', 'symbol'`); else data.
   */
  #runsHere(before: string): Runs {
    if (before.toUpperCase() === 'PROGRAM') return 'program';
    const head = this.#head.length ? this.#head : this.#word ? [this.#word.toUpperCase()] : [];
    return head[0] === 'DO' || this.#routineAs ? 'code' : null;
  }

  /** A character that is no identifier's ends the word being read; one that is no space is a token of its own; `;` ends the statement. */
  #endToken(c: string): void {
    if (this.#word) {
      this.#lastToken = this.#word;
      const word = this.#word.toUpperCase();
      if (this.#head.length < HEAD_WORDS) this.#head.push(word);
      if (word === 'AS' && isRoutineHead(this.#head)) this.#routineAs = true;
    }
    this.#word = '';
    if (!/\s/.test(c)) this.#lastToken = c;
    if (c === ';') {
      this.#head = [];
      this.#routineAs = false;
    }
  }

  /** The context an output lands in: a string whose `'` was its end is over. */
  #settled(): Context {
    const ctx = this.#context;
    if (ctx.kind === 'string' && ctx.closing) this.#endString(ctx);
    return this.#context;
  }

  /** The string `ctx` has ended at its `'`: between tokens now, where a `'` right here continues it. */
  #endString(ctx: Extract<Context, { kind: 'string' }>): void {
    this.#context = { kind: 'plain' };
    this.#ended = { backslashes: ctx.backslashes, runs: ctx.runs, adjacent: true, newline: false };
  }

  /**
   * Whether `c` between tokens keeps an ended string continuable: white space (a line break makes
   * a `'` after it continue the string) and the start of a `--` comment (which ends at a line break).
   */
  #keepsEnded(c: string, next: string | undefined): boolean {
    const ended = this.#ended;
    if (!ended) return false;
    ended.adjacent = false;
    if (c === '\n' || c === '\r') ended.newline = true;
    return /[ \t\f\v\n\r]/.test(c) || (c === '-' && next === '-');
  }

  /** Reads text[i] (and what it starts); returns the index of the last character read. */
  #read(text: string, i: number): number {
    const c = text[i];
    const ctx = this.#context;
    switch (ctx.kind) {
      case 'string':
        if (ctx.closing) {
          ctx.closing = false;
          if (c === "'") return i; // '' is a quote inside the string
          this.#endString(ctx);
          return this.#read(text, i);
        }
        if (c === "'") ctx.closing = true;
        else if (c === '\\' && ctx.backslashes) return i + 1;
        return i;
      case 'ident':
        if (c === '"') {
          if (text[i + 1] === '"') return i + 1;
          this.#context = { kind: 'plain' };
        }
        return i;
      case 'dollar':
        if (c === '$' && text.startsWith(`$${ctx.tag}$`, i)) {
          this.#context = { kind: 'plain' };
          return i + ctx.tag.length + 1;
        }
        return i;
      case 'line':
        if (c === '\n' || c === '\r') {
          this.#context = { kind: 'plain' };
          // The comment stood between a string and what may continue it.
          if (this.#ended) this.#ended.newline = true;
        }
        return i;
      case 'block':
        if (c === '*' && text[i + 1] === '/') {
          if (--ctx.depth === 0) this.#context = { kind: 'plain' };
          return i + 1;
        }
        if (c === '/' && text[i + 1] === '*') {
          ctx.depth++;
          return i + 1;
        }
        return i;
      case 'plain': {
        const before = text[i - 1];
        const ended = this.#ended;
        if (c === "'" && ended && (ended.adjacent || ended.newline)) {
          // PostgreSQL reads this as more of the string that ended: in its mode.
          this.#context = { kind: 'string', backslashes: ended.backslashes, closing: false, runs: ended.runs };
          this.#ended = undefined;
          return i;
        }
        if (!this.#keepsEnded(c, text[i + 1])) this.#ended = undefined;
        if (c === '$' && !IDENTIFIER_CHAR.test(before)) {
          const m = DOLLAR_TAG.exec(text.slice(i));
          if (m) {
            this.#endToken(c);
            this.#context = { kind: 'dollar', tag: m[0].slice(1, -1) };
            return i + m[0].length - 1;
          }
        }
        if (IDENTIFIER_CHAR.test(c)) {
          this.#word += c;
          return i;
        }
        if (c === "'") {
          // E'…' (e'…') takes backslash escapes: when the E is a word of its own, not the end of one.
          const e = (before === 'E' || before === 'e') && !IDENTIFIER_CHAR.test(text[i - 2]);
          const runs = this.#runsHere(e ? this.#lastToken : this.#word || this.#lastToken);
          this.#context = { kind: 'string', backslashes: e, closing: false, runs };
        } else if (c === '"') this.#context = { kind: 'ident' };
        else if (c === '-' && text[i + 1] === '-') this.#context = { kind: 'line' };
        else if (c === '/' && text[i + 1] === '*') this.#context = { kind: 'block', depth: 1 };
        this.#endToken(c);
        return this.#context.kind === 'line' || this.#context.kind === 'block' ? i + 1 : i;
      }
    }
  }
}
