/** A writable that keeps what is written to it (a CLI's output in a test). */
export class Capture {
  text = '';
  write(chunk: string): boolean {
    this.text += chunk;
    return true;
  }
}
