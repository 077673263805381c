// Apart from api-command.ts so cli.ts can tell a usage error without loading the API client.

/** A usage error of `svc <name>`: printed with the command's usage line; exit code 2 (78 for config). */
export class UsageError extends Error {
  readonly exitCode: number;
  constructor(message: string, exitCode = 2) {
    super(message);
    this.exitCode = exitCode;
  }
}

/** A usage text's synopsis: its lines up to the first blank one (every form of the command, not only the first). */
export function usageSynopsis(usage: string): string {
  return usage.split('\n\n')[0];
}
