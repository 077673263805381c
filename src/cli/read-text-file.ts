import { readFile } from 'node:fs/promises';

// A playbook file is UTF-8 text, as the API takes it: read leniently, a Latin-1 `é` became U+FFFD
// and was registered so, where the server refuses such bytes. The BOM is kept: it is the file's.
const STRICT_UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** A file that is not UTF-8 text; the message names its first bad byte as FILE:LINE:COL, as problems are printed. */
export class NotUtf8Error extends Error {
  override readonly name = 'NotUtf8Error';
  readonly file: string;
  readonly line: number;
  readonly column: number;
  constructor(file: string, line: number, column: number) {
    super(`${file}:${line}:${column}: not UTF-8 text (save the file as UTF-8)`);
    this.file = file;
    this.line = line;
    this.column = column;
  }
}

/** The text of a UTF-8 file; NotUtf8Error when it is not, the fs error when it cannot be read. */
export async function readTextFile(file: string): Promise<string> {
  const bytes = await readFile(file);
  try {
    return STRICT_UTF8.decode(bytes);
  } catch {
    const at = firstBadByte(bytes);
    throw new NotUtf8Error(file, at.line, at.column);
  }
}

/**
 * Where the first byte that is not UTF-8 stands: every character read leniently before it encodes
 * back to the file's own bytes (a U+FFFD written in the file too); columns count as the server's.
 */
function firstBadByte(bytes: Uint8Array): { line: number; column: number } {
  const encoder = new TextEncoder();
  let offset = 0;
  let line = 1;
  let column = 1;
  for (const char of new TextDecoder('utf-8', { ignoreBOM: true }).decode(bytes)) {
    const encoded = encoder.encode(char);
    if (!encoded.every((byte, i) => bytes[offset + i] === byte)) break;
    offset += encoded.length;
    if (char === '\n') {
      line += 1;
      column = 1;
    } else column += char.length;
  }
  return { line, column };
}
