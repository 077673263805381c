/** Keeps the first `limitBytes` of a stream and counts what it drops; `text()` notes the loss. */
export class CappedBuffer {
  private readonly chunks: Buffer[] = [];
  private kept = 0;
  private omitted = 0;
  private readonly limitBytes: number;

  constructor(limitBytes: number) {
    this.limitBytes = limitBytes;
  }

  push(chunk: Buffer): void {
    const room = this.limitBytes - this.kept;
    if (room > 0) {
      const part = chunk.length > room ? chunk.subarray(0, room) : chunk;
      this.chunks.push(part);
      this.kept += part.length;
    }
    this.omitted += Math.max(0, chunk.length - Math.max(room, 0));
  }

  /**
   * What was kept, noting the loss; `cut` is given the kept text when some was dropped (a secret
   * cut in two there is masked by it: the mask applied later sees only its first part).
   */
  text(cut: (kept: string) => string = (kept) => kept): string {
    const text = Buffer.concat(this.chunks).toString('utf8');
    return this.omitted > 0 ? `${cut(text)}\n[truncated: ${this.omitted} bytes omitted]` : text;
  }
}
