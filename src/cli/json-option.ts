import { readFileSync } from 'node:fs';
import * as v from 'valibot';
import { ownKeysRecord } from '../own-keys-record.ts';
import { UsageError } from './usage-error.ts';

const JsonObject = ownKeysRecord(v.string(), v.unknown());

/**
 * An option's text as typed, or, typed `@FILE`, the text of FILE (`@-`: standard input): a payload
 * holding a secret then stays off the command line, which any user of the machine reads (ps) for
 * as long as the command runs. No JSON text starts with `@`. Unreadable: a UsageError naming it.
 */
export function optionText(flag: string, text: string): string {
  if (!text.startsWith('@')) return text;
  const file = text.slice(1);
  if (!file) throw new UsageError(`${flag} @FILE expects a file name after the @ (@- reads standard input)`);
  try {
    return readFileSync(file === '-' ? 0 : file, 'utf8');
  } catch (e) {
    const why = e instanceof Error && 'code' in e && typeof e.code === 'string' ? e.code : String(e);
    throw new UsageError(`${flag} ${text}: cannot read ${file === '-' ? 'standard input' : 'the file'} (${why})`);
  }
}

/**
 * Why an option's text is not JSON, for its usage error: the parser's words, but of a text read
 * from a file or standard input (`@...`) only where it fails: V8's words quote the text, which may
 * hold the very secret that was kept off the command line.
 */
export function jsonSyntaxReason(error: unknown, typed: string): string {
  const message = error instanceof Error ? error.message : String(error);
  if (!typed.startsWith('@')) return message;
  const at = /line (\d+) column (\d+)/.exec(message);
  return at ? `at line ${at[1]} column ${at[2]} of ${typed.slice(1) === '-' ? 'standard input' : typed.slice(1)}` : `in ${typed.slice(1) === '-' ? 'standard input' : typed.slice(1)}, not quoted here`;
}

/** An option whose value is a JSON object (`--payload`), typed or `@FILE`, or a usage error saying what it is instead; `example` shows one. */
export function jsonObjectOption(flag: string, typed: string, example: string): Record<string, unknown> {
  const text = optionText(flag, typed);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    throw new UsageError(`${flag} is not valid JSON (${jsonSyntaxReason(e, typed)}); expects an object like '${example}'`);
  }
  const r = v.safeParse(JsonObject, value);
  if (!r.success || Array.isArray(value)) throw new UsageError(`${flag} must be a JSON object like '${example}', got ${value === null ? 'null' : Array.isArray(value) ? 'an array' : typeof value}`);
  return r.output;
}
