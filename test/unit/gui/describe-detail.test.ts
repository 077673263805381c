// How the console says a refusal in one line (gui/src/api.ts describeDetail): a message and its
// errors once each, even when the server's message already holds them (invalid_inputs says
// `…: workload.version: must be string, got integer` and lists the same error).
import { describe, expect, it } from 'vitest';
import { describeDetail } from '../../../gui/src/api.ts';

describe('describeDetail', () => {
  it('says a message, then its errors', () => {
    expect(describeDetail({ message: 'invalid body', errors: ['name: required', 'type: unknown'] })).toBe('invalid body: name: required; type: unknown');
    expect(describeDetail('plain text')).toBe('plain text');
  });

  it('does not repeat errors the message already says', () => {
    const detail = { code: 'invalid_inputs', message: 'the inputs refused the start: workload.version: must be string, got integer', errors: ['workload.version: must be string, got integer'] };
    expect(describeDetail(detail)).toBe('the inputs refused the start: workload.version: must be string, got integer');
  });
});
