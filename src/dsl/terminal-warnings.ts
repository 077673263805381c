import { MetadataSchema, type PlaybookMetadata } from './playbook.schema.ts';
import { closest } from './unknown-field-message.ts';

/** The fields of `metadata.terminal` that GET /api/agents (the GUI terminal) reads. */
const TERMINAL_FIELDS = Object.keys(MetadataSchema.entries.terminal.wrapped.entries);

/**
 * Registration warnings for `metadata.terminal` fields nothing reads, one per field with "did you
 * mean" when a known one is close. Metadata stays loose (labels of other tools), but `terminal` is
 * this service's block: a misspelt `visibel: true` left the agent out of GET /api/agents in silence.
 */
export function terminalWarnings(metadata: PlaybookMetadata): string[] {
  const terminal = metadata.terminal;
  if (!terminal) return [];
  return Object.keys(terminal)
    .filter((key) => !TERMINAL_FIELDS.includes(key))
    .map((key) => {
      const close = closest(key, TERMINAL_FIELDS);
      return `metadata.terminal.${key} is not a field the agents terminal reads${close ? ` (did you mean '${close}'?)` : ` (known: ${TERMINAL_FIELDS.join(', ')})`}: it has no effect`;
    });
}
