// SecretMask.maskCut: a text cut by a cap (shell output, an mcp error's text) whose end is the
// beginning of a secret, or of one of its encodings, has that end masked; shorter beginnings
// than MIN_SECRET_LENGTH, and a text whose end begins no secret, are kept.
import { describe, expect, it } from 'vitest';
import { SECRET_MASK, SecretMask } from '../../../src/credential/redact-secrets.ts';

const SECRET = 'Tok/en+Secret=value';

describe('SecretMask.maskCut', () => {
  const mask = new SecretMask([SECRET]);

  it("masks the secret's beginning at the end of the cut text, in any case, and whole secrets before it", () => {
    expect(mask.maskCut('out: Tok/en+Se')).toBe(`out: ${SECRET_MASK}`);
    expect(mask.maskCut('out: tok/EN')).toBe(`out: ${SECRET_MASK}`);
    expect(mask.maskCut(`${SECRET} then Tok/`)).toBe(`${SECRET_MASK} then ${SECRET_MASK}`);
  });

  it('masks the beginning of an encoding of the secret (base64, URL-encoded)', () => {
    const base64 = Buffer.from(SECRET).toString('base64');
    expect(mask.maskCut(`b64 ${base64.slice(0, 9)}`)).toBe(`b64 ${SECRET_MASK}`);
    expect(mask.maskCut(`url ${encodeURIComponent(SECRET).slice(0, 8)}`)).toBe(`url ${SECRET_MASK}`);
  });

  it('masks a beginning cut inside a character (U+FFFD after it)', () => {
    const wide = new SecretMask(['pässwörd-geheim']);
    expect(wide.maskCut('pw pässw\uFFFD')).toBe(`pw ${SECRET_MASK}`);
  });

  it('keeps a beginning shorter than MIN_SECRET_LENGTH and text whose end begins no secret', () => {
    expect(mask.maskCut('out: Tok')).toBe('out: Tok');
    expect(mask.maskCut('out: nothing here')).toBe('out: nothing here');
    expect(new SecretMask().maskCut('Tok/en+Se')).toBe('Tok/en+Se');
  });
});

describe('SecretMask.holds', () => {
  it('is true for a text holding a secret or an encoding of one, false otherwise', () => {
    const mask = new SecretMask([SECRET]);
    expect(mask.holds(`Bearer ${SECRET}`)).toBe(true);
    expect(mask.holds(`{"t":"${encodeURIComponent(SECRET)}"}`)).toBe(true);
    expect(mask.holds('not-a-secret')).toBe(false);
    expect(new SecretMask().holds(SECRET)).toBe(false);
  });
});
