import { CLAIM_HEADERS, type PresentedCommand } from '../protocol.ts';

/**
 * The headers that name the claim a secret is fetched for (CLAIM_HEADERS): the server gives a
 * credential, keychain entry or secret handle to the worker token only for a command it holds.
 */
export function claimHeaders(command: Pick<PresentedCommand, 'command_id' | 'attempt'>, workerId: string): Record<string, string> {
  return {
    [CLAIM_HEADERS.command]: String(command.command_id),
    [CLAIM_HEADERS.attempt]: String(command.attempt),
    [CLAIM_HEADERS.worker]: workerId,
  };
}
