// What the console shows when a call fails: the API's detail; for an answer that is not the API's
// JSON (a proxy's HTML error page, a crash's text) only its status, never the markup or a trace;
// for a server that cannot be reached (stopped), a sentence saying so rather than "Failed to fetch".
import { describe, expect, it } from 'vitest';
import { ApiError, detailOfAnswer, errorText } from '../../../gui/src/api.ts';

describe('console error text', () => {
  it("keeps the API's own detail", () => {
    expect(detailOfAnswer(404, 'Not Found', JSON.stringify({ detail: 'execution 9 not found' }))).toBe('execution 9 not found');
    expect(errorText(new ApiError(404, 'execution 9 not found'))).toBe('404: execution 9 not found');
  });

  it('shows neither markup nor a trace of an HTML or text error page', () => {
    const html = '<html><body><h1>Internal Server Error</h1>at foo (/srv/x.js:1:2)</body></html>';
    const text = errorText(new ApiError(500, detailOfAnswer(500, 'Internal Server Error', html)));
    expect(text).toBe('500: the server answered “Internal Server Error” without details');
    expect(errorText(new ApiError(502, detailOfAnswer(502, '', 'Error: boom\n    at x (y.js:1)')))).toBe('502: the server answered HTTP 502 without details');
  });

  it('says the server cannot be reached when fetch got no answer', () => {
    const text = errorText(new TypeError('Failed to fetch'));
    expect(text).toMatch(/^The server cannot be reached/);
  });
});
