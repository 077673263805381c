// Apart from api-command.ts so cli.ts can tell a usage error without loading the API client.
import { holdsUserinfo } from '../url-userinfo.ts';

/** A usage error of `svc <name>`: printed with the command's usage line; exit code 2 (78 for config). */
export class UsageError extends Error {
  readonly exitCode: number;
  constructor(message: string, exitCode = 2) {
    super(message);
    this.exitCode = exitCode;
  }
}

type Writable = { write(text: string): unknown };

/** The exit code of a setting refused (an `SVC_*` variable), as sysexits.h names it. */
const EX_CONFIG = 78;

/** `--json` among a command's arguments before a `--`, read without parsing them: a usage error may be that they did not parse. */
export function asksForJson(argv: readonly string[]): boolean {
  const end = argv.indexOf('--');
  return (end < 0 ? argv : argv.slice(0, end)).includes('--json');
}

/**
 * A usage error of `svc <command>`: the problem and the synopsis on stderr; given `--json`, also
 * `{error, status: null, detail}` on stdout, the shape of a refusal (nothing was sent: no status),
 * so a program that reads stdout learns why as it does of a refusal (`extra` before the detail).
 * Every command says one so; a setting refused (`exitCode` 78) stays on stderr alone, without the synopsis.
 */
export function writeUsageError(
  io: { out: Writable; err: Writable },
  command: string,
  message: string,
  synopsis: string,
  argv: readonly string[],
  exitCode = 2,
  extra: Record<string, unknown> = {},
): void {
  if (exitCode !== EX_CONFIG && asksForJson(argv)) io.out.write(commandErrorJson(command, message, extra));
  // A setting refused is no fault of the command line: the line naming the variable alone.
  io.err.write(exitCode === EX_CONFIG ? `svc ${command}: ${message}\n` : `svc ${command}: ${message}\nusage: ${synopsis}\n`);
}

/**
 * What `svc <command>` refused without asking a server, as a program reads it with `--json`:
 * `{error, status: null, detail}`, `error` the line on stderr, `detail` the problem. `command`
 * '': svc's own (an unknown command), `error` then `svc: <message>`.
 */
export function commandErrorJson(command: string, message: string, extra: Record<string, unknown> = {}): string {
  return `${JSON.stringify({ error: `${command ? `svc ${command}` : 'svc'}: ${message}`, status: null, ...extra, detail: message }, null, 2)}\n`;
}

/** A usage text's synopsis: its lines up to the first blank one (every form of the command, not only the first). */
export function usageSynopsis(usage: string): string {
  return usage.split('\n\n')[0];
}

/** An unknown option, a missing value or a stray argument, as node:util's parseArgs throws them. */
export function isParseArgsError(err: unknown): boolean {
  return err instanceof TypeError && 'code' in err && typeof err.code === 'string' && err.code.startsWith('ERR_PARSE_ARGS_');
}

/**
 * An error's message for a person, in one line: node:util's parseArgs words an option it refuses
 * over three lines ("argument is ambiguous. / Did you forget ...") or with a hint about `--`
 * that names no mistake; those become `unknown option '--x'`, `--x needs a value`, `--x takes no value`. `args`: the
 * arguments parsed, for the value a refused `--x -1` gave. Other errors keep their message.
 */
export function optionErrorMessage(err: unknown, args: readonly string[]): string {
  const message = err instanceof Error ? err.message : String(err);
  const code = err instanceof Error && 'code' in err ? err.code : undefined;
  if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') return `unknown option ${/^Unknown option ('[^']*')/.exec(message)?.[1] ?? message}`;
  if (code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE') {
    // A value that starts with a dash is read as the next option: it goes after `=` (`--limit=-1`).
    const ambiguous = /^Option '([^']*)' argument is ambiguous\.[\s\S]*?use '(--[^=']+)=/.exec(message);
    if (ambiguous) {
      const typed = args.indexOf(ambiguous[1]);
      const value = typed >= 0 && args[typed + 1] !== undefined ? args[typed + 1] : '-1';
      return `${ambiguous[2]} needs a value (a value starting with - goes after =: ${ambiguous[2]}=${value})`;
    }
    const missing = /^Option '(?:-\w, )?(--[^ ']+)[^']*' argument missing/.exec(message);
    if (missing) return `${missing[1]} needs a value`;
    const flag = /^Option '(?:-\w, )?(--[^ ']+)' does not take an argument/.exec(message);
    if (flag) return `${flag[1]} takes no value`;
  }
  return message.split('\n')[0];
}

/**
 * What is wrong with a `--server` value, or undefined when a request can go to it: an http(s)
 * URL that parses (`http://[::1` and `http://host:99999` look like one and are not).
 */
export function serverFlagProblem(flag: string): string | undefined {
  const url = flag.trim();
  if (!(/^https?:\/\/\S+$/i.test(url) && URL.canParse(url))) return `--server expects an http(s) URL, got ${JSON.stringify(flag)}`;
  // The client never sends one (its error would quote the password): refused, the value unquoted.
  if (holdsUserinfo(url)) return SERVER_FLAG_USERINFO;
  return undefined;
}

/** A `--server` with a user name or password, told without the value. */
export const SERVER_FLAG_USERINFO = '--server must not hold a user name or password (an API token goes in SVC_API_TOKEN)';
