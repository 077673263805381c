import { describe, expect, it } from 'vitest';
import { inspectCommand } from '../../../src/cli/inspect.ts';
import { Capture } from '../../helpers/capture.ts';

// svc inspect named neither the bad ID nor what was wrong ("expects one execution id" for
// `abc`, a missing ID and a stray argument alike), and took 9999999999999999, past what an id
// can be, to the server (exit 1, "HTTP 422 invalid params"). It now says what the other
// execution commands (svc status, logs, cancel) say, before anything is sent.
describe('svc inspect ID usage errors', () => {
  it.each([
    [[], 'inspect needs an execution ID'],
    [['abc'], 'the execution ID must be a positive integer, got "abc"'],
    [['0'], 'the execution ID must be a positive integer, got "0"'],
    [['9999999999999999'], 'the execution ID must be a positive integer, got "9999999999999999"'],
    [['1', '2'], 'unexpected arguments: 2'],
  ])('inspect %j: %s, exit 2', async (args, message) => {
    const out = new Capture();
    const err = new Capture();
    expect(await inspectCommand(args, out, err)).toBe(2);
    expect(out.text).toBe('');
    expect(err.text).toBe(`svc inspect: ${message}\nusage: svc inspect EXECUTION_ID [--json] [--server URL]\n`);
  });
});
