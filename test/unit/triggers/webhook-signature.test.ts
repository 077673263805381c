// The webhook signature styles (src/triggers/webhook-signature.ts) against signatures made here
// with node:crypto the way each sender documents them (GitHub's own test vector first).
import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { verifyWebhookSignature, WEBHOOK_TIMESTAMP_TOLERANCE_SECONDS, type SignatureVerdict } from '../../../src/triggers/webhook-signature.ts';
import { webhookFireKey, webhookRequest } from '../../../src/triggers/webhook-request.ts';

const SECRET = 'It\'s a Secret to Everybody';
const BODY = Buffer.from('Hello, World!');
const NOW_MS = Date.UTC(2026, 0, 15, 12, 0, 0);
const NOW_S = NOW_MS / 1000;
const hex = (secret: string, text: string | Buffer) => createHmac('sha256', secret).update(text).digest('hex');
const refusedFor = (verdict: SignatureVerdict) => (verdict.ok ? 'ok' : verdict.reason);

describe('github: X-Hub-Signature-256: sha256=<hex HMAC-SHA256(secret, body)>', () => {
  const check = (headers: Record<string, string | string[]>, body = BODY, secret = SECRET) => verifyWebhookSignature('github', secret, body, headers, NOW_MS);

  it('accepts GitHub\'s documented test vector', () => {
    expect(check({ 'x-hub-signature-256': 'sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17' })).toEqual({ ok: true });
    // Upper-case hex is the same digest.
    expect(check({ 'x-hub-signature-256': 'sha256=757107EA0EB2509FC211221CCE984B8A37570B6D7586C22C46F4379C8B043E17' }).ok).toBe(true);
  });

  it('refuses a tampered body, a wrong secret, a missing or malformed header, and a header sent twice', () => {
    const good = `sha256=${hex(SECRET, BODY)}`;
    expect(refusedFor(check({ 'x-hub-signature-256': good }, Buffer.from('Hello, World?')))).toBe('signature');
    expect(refusedFor(check({ 'x-hub-signature-256': good }, BODY, 'another secret'))).toBe('signature');
    expect(refusedFor(check({}))).toBe('signature');
    expect(refusedFor(check({ 'x-hub-signature-256': hex(SECRET, BODY) }))).toBe('signature'); // no sha256= prefix
    expect(refusedFor(check({ 'x-hub-signature-256': `sha1=${hex(SECRET, BODY)}` }))).toBe('signature');
    expect(refusedFor(check({ 'x-hub-signature-256': `${good.slice(0, -2)}` }))).toBe('signature'); // short digest
    expect(refusedFor(check({ 'x-hub-signature-256': `${good}00` }))).toBe('signature'); // long digest
    expect(refusedFor(check({ 'x-hub-signature-256': `sha256=${'zz'.repeat(32)}` }))).toBe('signature'); // not hex
    expect(refusedFor(check({ 'x-hub-signature-256': [good, good] }))).toBe('signature');
  });

  it('refuses when the trigger has no secret, whatever is sent', () => {
    expect(refusedFor(check({ 'x-hub-signature-256': `sha256=${hex('', BODY)}` }, BODY, ''))).toBe('signature');
  });

  it('messages never quote the secret or the expected digest', () => {
    const verdict = check({ 'x-hub-signature-256': `sha256=${'0'.repeat(64)}` });
    expect(verdict.ok).toBe(false);
    const text = JSON.stringify(verdict);
    expect(text).not.toContain(SECRET);
    expect(text).not.toContain(hex(SECRET, BODY));
  });
});

describe('stripe: Stripe-Signature: t=<unix>,v1=<hex HMAC(secret, "<t>.<body>")>', () => {
  const header = (t: number, ...v1: string[]) => [`t=${t}`, ...v1.map((s) => `v1=${s}`), 'v0=deadbeef'].join(',');
  const check = (value: string | undefined, body = BODY) => verifyWebhookSignature('stripe', SECRET, body, value === undefined ? {} : { 'stripe-signature': value }, NOW_MS);

  it('accepts a fresh timestamp with any matching v1 among several', () => {
    expect(check(header(NOW_S, hex(SECRET, `${NOW_S}.Hello, World!`)))).toEqual({ ok: true });
    expect(check(header(NOW_S - 10, '0'.repeat(64), hex(SECRET, `${NOW_S - 10}.Hello, World!`)))).toEqual({ ok: true });
  });

  it('refuses a timestamp outside 5 minutes either way, though signed ("timestamp")', () => {
    const at = (t: number) => check(header(t, hex(SECRET, `${t}.Hello, World!`)));
    expect(at(NOW_S - WEBHOOK_TIMESTAMP_TOLERANCE_SECONDS).ok).toBe(true);
    expect(refusedFor(at(NOW_S - WEBHOOK_TIMESTAMP_TOLERANCE_SECONDS - 1))).toBe('timestamp');
    expect(refusedFor(at(NOW_S + WEBHOOK_TIMESTAMP_TOLERANCE_SECONDS + 1))).toBe('timestamp');
  });

  it('refuses a signature over another timestamp or body, a wrong secret, no t, no v1, no header', () => {
    const sig = hex(SECRET, `${NOW_S}.Hello, World!`);
    expect(refusedFor(check(header(NOW_S + 1, sig)))).toBe('signature'); // t changed: the signed text differs
    expect(refusedFor(check(header(NOW_S, sig), Buffer.from('Hello')))).toBe('signature');
    expect(refusedFor(check(header(NOW_S, hex('wrong', `${NOW_S}.Hello, World!`))))).toBe('signature');
    expect(refusedFor(check(`v1=${sig}`))).toBe('signature');
    expect(refusedFor(check(`t=${NOW_S},v0=${sig}`))).toBe('signature');
    expect(refusedFor(check(undefined))).toBe('signature');
  });
});

describe('hmac: a header of its own, a prefix, an optional timestamp header', () => {
  it('defaults: X-Signature, no prefix, the body alone', () => {
    const check = (value: string) => verifyWebhookSignature('hmac', SECRET, BODY, { 'x-signature': value }, NOW_MS);
    expect(check(hex(SECRET, BODY)).ok).toBe(true);
    expect(refusedFor(check(hex(SECRET, 'other')))).toBe('signature');
  });

  it('a named header and prefix; with a timestamp header the text signed is "<ts>.<body>", refused outside 5 minutes', () => {
    const style = { style: 'hmac', header: 'x-acme-signature', prefix: 'v1=', timestamp_header: 'x-acme-timestamp' } as const;
    const signed = (ts: number) => ({ 'x-acme-signature': `v1=${hex(SECRET, `${ts}.Hello, World!`)}`, 'x-acme-timestamp': String(ts) });
    expect(verifyWebhookSignature(style, SECRET, BODY, signed(NOW_S), NOW_MS).ok).toBe(true);
    expect(refusedFor(verifyWebhookSignature(style, SECRET, BODY, signed(NOW_S - 301), NOW_MS))).toBe('timestamp');
    // The timestamp is part of what is signed: changing it breaks the signature.
    expect(refusedFor(verifyWebhookSignature(style, SECRET, BODY, { ...signed(NOW_S - 600), 'x-acme-timestamp': String(NOW_S) }, NOW_MS))).toBe('signature');
    // The body alone, without the timestamp, is not what this style signs.
    expect(refusedFor(verifyWebhookSignature(style, SECRET, BODY, { 'x-acme-signature': `v1=${hex(SECRET, BODY)}`, 'x-acme-timestamp': String(NOW_S) }, NOW_MS))).toBe('signature');
    expect(refusedFor(verifyWebhookSignature(style, SECRET, BODY, { 'x-acme-signature': signed(NOW_S)['x-acme-signature'] }, NOW_MS))).toBe('signature');
    expect(refusedFor(verifyWebhookSignature(style, SECRET, BODY, { ...signed(NOW_S), 'x-acme-timestamp': 'yesterday' }, NOW_MS))).toBe('signature');
  });
});

describe('bearer: Authorization: Bearer <secret>', () => {
  const check = (value?: string) => verifyWebhookSignature('bearer', SECRET, BODY, value === undefined ? {} : { authorization: value }, NOW_MS);

  it('accepts the secret (scheme in any case), refuses anything else', () => {
    expect(check(`Bearer ${SECRET}`).ok).toBe(true);
    expect(check(`bearer ${SECRET}`).ok).toBe(true);
    expect(refusedFor(check(`Bearer ${SECRET}x`))).toBe('signature');
    expect(refusedFor(check(`Bearer ${SECRET.slice(0, -1)}`))).toBe('signature');
    expect(refusedFor(check(`Basic ${SECRET}`))).toBe('signature');
    expect(refusedFor(check(SECRET))).toBe('signature');
    expect(refusedFor(check())).toBe('signature');
  });
});

describe('a signature header sent more than once is refused, in every style', () => {
  // The route hands every copy (node's headersDistinct): one copy is taken, two are refused
  // whatever they hold, the good one first or last (which one did the sender sign?).
  const t = String(NOW_S);
  const good = {
    github: { 'x-hub-signature-256': `sha256=${hex(SECRET, BODY)}` },
    stripe: { 'stripe-signature': `t=${t},v1=${hex(SECRET, `${t}.Hello, World!`)}` },
    hmac: { 'x-signature': hex(SECRET, BODY) },
    bearer: { authorization: `Bearer ${SECRET}` },
  } as const;
  const bad = { github: 'sha256=' + '0'.repeat(64), stripe: `t=${t},v1=${'0'.repeat(64)}`, hmac: '0'.repeat(64), bearer: 'Bearer nope' } as const;

  it.each(['github', 'stripe', 'hmac', 'bearer'] as const)('%s', (style) => {
    const [[name, value]] = Object.entries(good[style]);
    expect(verifyWebhookSignature(style, SECRET, BODY, { [name]: [value] }, NOW_MS)).toEqual({ ok: true });
    for (const copies of [[value, bad[style]], [bad[style], value], [value, value]]) {
      const verdict = verifyWebhookSignature(style, SECRET, BODY, { [name]: copies }, NOW_MS);
      expect(refusedFor(verdict), JSON.stringify(copies)).toBe('signature');
    }
  });

  it('the timestamp header of an hmac style too; and two Stripe headers joined into one line (by a proxy)', () => {
    const style = { style: 'hmac', header: 'x-sig', prefix: '', timestamp_header: 'x-ts' } as const;
    const sig = hex(SECRET, `${t}.Hello, World!`);
    expect(verifyWebhookSignature(style, SECRET, BODY, { 'x-sig': sig, 'x-ts': [t] }, NOW_MS).ok).toBe(true);
    expect(refusedFor(verifyWebhookSignature(style, SECRET, BODY, { 'x-sig': sig, 'x-ts': [t, t] }, NOW_MS))).toBe('signature');
    const joined = `${good.stripe['stripe-signature']}, ${bad.stripe}`;
    const verdict = verifyWebhookSignature('stripe', SECRET, BODY, { 'stripe-signature': joined }, NOW_MS);
    expect(verdict).toEqual({ ok: false, reason: 'signature', message: expect.stringContaining('more than one timestamp') });
  });
});

describe('the request a trigger\'s templates read, and its fire key', () => {
  it('parses JSON and forms, keeps other bodies as text, hides credential headers', () => {
    const json = webhookRequest(Buffer.from('{"a":[1,2]}'), { 'content-type': 'application/json; charset=utf-8', authorization: `Bearer ${SECRET}`, cookie: 'sid=1', 'x-github-event': 'push' }, 'x=1&x=2&y=3');
    expect(json).toEqual({ body: { a: [1, 2] }, headers: { 'content-type': 'application/json; charset=utf-8', 'x-github-event': 'push' }, query: { x: ['1', '2'], y: '3' } });
    expect(webhookRequest(Buffer.from('a=1&b=two+words'), { 'content-type': 'application/x-www-form-urlencoded' }, '').body).toEqual({ a: '1', b: 'two words' });
    expect(webhookRequest(Buffer.from('{{ secrets }}'), { 'content-type': 'text/plain' }, '').body).toBe('{{ secrets }}');
    expect(webhookRequest(Buffer.alloc(0), { 'content-type': 'application/json' }, '').body).toBeNull();
    expect(() => webhookRequest(Buffer.from('{nope'), { 'content-type': 'application/json' }, '')).toThrow(/not valid JSON/);
    // Every copy of a header, as the route gives them: a repeat is joined, the first content type decides.
    const copies = webhookRequest(Buffer.from('{"a":1}'), { 'content-type': ['application/json', 'text/plain'], 'x-tag': ['a', 'b'], authorization: ['Bearer x', 'Bearer y'] }, '');
    expect(copies).toEqual({ body: { a: 1 }, headers: { 'content-type': 'application/json, text/plain', 'x-tag': 'a, b' }, query: {} });
  });

  it('the fire key is the delivery id when the trigger names one (400 when it renders empty), else the body\'s SHA-256', () => {
    const request = webhookRequest(BODY, { 'x-github-delivery': 'abc-123' }, '');
    expect(webhookFireKey("{{ request.headers['x-github-delivery'] }}", request, BODY)).toBe('abc-123');
    expect(webhookFireKey(undefined, request, BODY)).toBe('dffd6021bb2bd5b0af676290809ec3a53191dd81c7f70a4b28688a362182986f');
    expect(() => webhookFireKey("{{ request.headers['x-missing'] }}", request, BODY)).toThrow(/delivery_id did not render/);
    expect(() => webhookFireKey("{{ request.headers['x-missing'] | default('') }}", request, BODY)).toThrow(/rendered empty/);
  });
});
