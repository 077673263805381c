import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkServerAuth, ConfigError, isEncryptionKey, isLoopbackHost, loadClientConfig, loadConfig } from '../../src/config.ts';

const key = () => randomBytes(32).toString('base64');

function configError(env: Record<string, string>): string {
  try {
    loadConfig(env);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return String(err instanceof Error ? err.message : err);
  }
  throw new Error(`expected ${JSON.stringify(Object.keys(env))} to be refused`);
}

describe('loadConfig', () => {
  it('fills every default and freezes the result', () => {
    const c = loadConfig({});
    expect(c.SVC_PORT).toBe(8082);
    expect(c.SVC_DATA_DIR).toBe('./.svc');
    expect(c.SVC_WORKER_CONCURRENCY).toBe(4);
    expect(c.SVC_BATCH_ACCEPT_ENQUEUE_TIMEOUT_SECONDS).toBe(0.25);
    expect(c.SVC_BATCH_ACCEPT_QUEUE_MAXSIZE).toBe(1024);
    expect(c.SVC_BATCH_ACCEPT_WORKERS).toBe(1);
    expect(c.SVC_BATCH_PROCESSING_TIMEOUT_SECONDS).toBe(15);
    expect(c.SVC_BATCH_STATUS_STREAM_POLL_SECONDS).toBe(0.5);
    expect(c.SVC_COMMAND_REAPER_ENABLED).toBe(true);
    expect(c.SVC_COMMAND_REAPER_INTERVAL_SECONDS).toBe(60);
    expect(c.SVC_COMMAND_REAPER_WORKER_STALE_SECONDS).toBe(60);
    expect(c.SVC_COMMAND_REAPER_HEALTHY_HARD_TIMEOUT_SECONDS).toBe(1800);
    expect(c.SVC_COMMAND_REAPER_PENDING_RETRY_SECONDS).toBe(60);
    expect(c.SVC_COMMAND_REAPER_MAX_PER_RUN).toBe(100);
    expect(c.RESUME_WINDOW_MINUTES).toBe(5);
    expect(c.SVC_BATCH_MAX_EVENTS).toBe(256);
    expect(c.SVC_BATCH_MAX_BYTES).toBe(2 * 1024 * 1024);
    expect(c.SVC_ALLOW_SERVICE_DB_TASKS).toBe('off');
    expect(c.SVC_AUTO_RESUME_MODE).toBe('restart');
    expect(c.SVC_AUTH).toBe('none');
    expect(c.SVC_HOST).toBe('127.0.0.1');
    expect(Object.isFrozen(c)).toBe(true);
  });

  it('parses given values', () => {
    const c = loadConfig({ SVC_PORT: '9000', SVC_COMMAND_REAPER_ENABLED: 'false', SVC_BATCH_ACCEPT_ENQUEUE_TIMEOUT_SECONDS: '0.5' });
    expect(c.SVC_PORT).toBe(9000);
    expect(c.SVC_COMMAND_REAPER_ENABLED).toBe(false);
    expect(c.SVC_BATCH_ACCEPT_ENQUEUE_TIMEOUT_SECONDS).toBe(0.5);
  });

  it.each([
    ['SVC_PORT', 'abc', /invalid SVC_PORT: expects an integer from 0 to 65535 \(got "abc"\)/],
    ['SVC_BATCH_ACCEPT_WORKERS', '0', /invalid SVC_BATCH_ACCEPT_WORKERS: expects an integer from 1/],
    ['SVC_COMMAND_REAPER_ENABLED', 'maybe', /invalid SVC_COMMAND_REAPER_ENABLED: expects true or false/],
    ['SVC_AUTO_RESUME_MODE', 'later', /invalid SVC_AUTO_RESUME_MODE: expects restart or cancel/],
    ['SVC_LOG_LEVEL', 'loud', /invalid SVC_LOG_LEVEL/],
  ])('rejects %s=%s with one line naming the variable', (name, value, pattern) => {
    expect(() => loadConfig({ [name]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ [name]: value })).toThrow(pattern);
  });

  // 1,000,000 days (as SVC_RETENTION_DAYS), in seconds or minutes; a timer's longest wait for the stale threshold.
  const MAX_AGE_SECONDS = 86_400_000_000;
  it.each([
    ['SVC_COMMAND_REAPER_HEALTHY_HARD_TIMEOUT_SECONDS', MAX_AGE_SECONDS],
    ['SVC_COMMAND_REAPER_PENDING_RETRY_SECONDS', MAX_AGE_SECONDS],
    ['SVC_COMMAND_CLAIM_HEALTHY_WORKER_HARD_TIMEOUT_SECONDS', MAX_AGE_SECONDS],
    ['SVC_AUTO_RESUME_MIN_STALE_SECONDS', MAX_AGE_SECONDS],
    ['RESUME_WINDOW_MINUTES', MAX_AGE_SECONDS / 60],
    ['SVC_COMMAND_REAPER_WORKER_STALE_SECONDS', 2_147_483],
  ])('%s takes %d and refuses one more (a larger age failed every sweep or claim: timestamp out of range)', (name, max) => {
    expect(loadConfig({ [name]: String(max) })[name as keyof ReturnType<typeof loadConfig>]).toBe(max);
    expect(configError({ [name]: String(max + 1) })).toMatch(new RegExp(`invalid ${name}: .*${max}`));
    expect(configError({ [name]: '999999999999' })).toMatch(new RegExp(`invalid ${name}`));
  });

  it('SVC_COMMAND_CLAIM_HEALTHY_WORKER_HARD_TIMEOUT_SECONDS=0 is refused: every claim would be taken over at once', () => {
    expect(configError({ SVC_COMMAND_CLAIM_HEALTHY_WORKER_HARD_TIMEOUT_SECONDS: '0' })).toMatch(/invalid SVC_COMMAND_CLAIM_HEALTHY_WORKER_HARD_TIMEOUT_SECONDS: expects a whole number of seconds from 1/);
    expect(loadConfig({ SVC_COMMAND_CLAIM_HEALTHY_WORKER_HARD_TIMEOUT_SECONDS: '1' }).SVC_COMMAND_CLAIM_HEALTHY_WORKER_HARD_TIMEOUT_SECONDS).toBe(1);
  });

  it('SVC_HOT_SNAPSHOTS: unset leaves the cache its default; a whole number of executions, at least 1', () => {
    expect(loadConfig({}).SVC_HOT_SNAPSHOTS).toBeUndefined();
    expect(loadConfig({ SVC_HOT_SNAPSHOTS: '500' }).SVC_HOT_SNAPSHOTS).toBe(500);
    for (const bad of ['0', '-1', '1.5', 'many']) expect(configError({ SVC_HOT_SNAPSHOTS: bad })).toMatch(/invalid SVC_HOT_SNAPSHOTS: expects a whole number of executions, at least 1/);
  });

  it('never echoes a database URL or key back', () => {
    try {
      loadConfig({ SVC_DATABASE_URL: 'not a url with password hunter2' });
      expect.unreachable();
    } catch (err) {
      expect(String(err)).toMatch(/SVC_DATABASE_URL/);
      expect(String(err)).not.toMatch(/hunter2/);
    }
  });

  it('accepts an encryption key of 32 bytes, base64 or base64url, padded or not', () => {
    const bytes = randomBytes(32);
    for (const text of [bytes.toString('base64'), bytes.toString('base64url'), bytes.toString('base64').replace(/=+$/, '')]) {
      expect(isEncryptionKey(text), text).toBe(true);
      expect(loadConfig({ SVC_ENCRYPTION_KEY: text }).SVC_ENCRYPTION_KEY).toBe(text);
    }
    const old = `${key()}, ${key()},`;
    expect(loadConfig({ SVC_ENCRYPTION_KEYS_OLD: old }).SVC_ENCRYPTION_KEYS_OLD).toBe(old.trim());
  });

  it.each([
    ['not base64', 'abc'],
    ['31 bytes', randomBytes(31).toString('base64')],
    ['33 bytes', randomBytes(33).toString('base64')],
    ['hex of 32 bytes', randomBytes(32).toString('hex')],
    ['characters outside base64', `${randomBytes(30).toString('base64')}!!`],
  ])('refuses SVC_ENCRYPTION_KEY that is %s, in one line that names it and not the value', (_what, value) => {
    const message = configError({ SVC_ENCRYPTION_KEY: value });
    expect(message).toBe('invalid SVC_ENCRYPTION_KEY: expects base64 of exactly 32 bytes (`openssl rand -base64 32`)');
    expect(message).not.toContain(value);
  });

  it('refuses each bad item of SVC_ENCRYPTION_KEYS_OLD by position, never echoing keys', () => {
    const good = key();
    const message = configError({ SVC_ENCRYPTION_KEYS_OLD: `${good},abc` });
    expect(message).toBe('invalid SVC_ENCRYPTION_KEYS_OLD: item 2 of 2: expects base64 of exactly 32 bytes (`openssl rand -base64 32`)');
    expect(message).not.toContain(good);
    expect(configError({ SVC_ENCRYPTION_KEYS_OLD: randomBytes(16).toString('base64') })).toMatch(/^invalid SVC_ENCRYPTION_KEYS_OLD: item 1 of 1/);
  });

  it('checks the keys before anything else can use them, with a good database URL beside them', () => {
    expect(configError({ SVC_DATABASE_URL: 'postgres://u:p@127.0.0.1:5/db', SVC_ENCRYPTION_KEY: 'abc' })).toMatch(/^invalid SVC_ENCRYPTION_KEY:/);
  });

  it('accepts only postgres:// and postgresql:// database URLs', () => {
    expect(loadConfig({ SVC_DATABASE_URL: 'postgres://u:p@127.0.0.1:5432/db' }).SVC_DATABASE_URL).toBe('postgres://u:p@127.0.0.1:5432/db');
    expect(loadConfig({ SVC_DATABASE_URL: 'postgresql://127.0.0.1/db?sslmode=disable' }).SVC_DATABASE_URL).toBe('postgresql://127.0.0.1/db?sslmode=disable');
    for (const value of ['mysql://u:secret-pw@h/db', 'http://h/db', 'h:5432/db', '/var/run/postgresql']) {
      const message = configError({ SVC_DATABASE_URL: value });
      expect(message).toBe('invalid SVC_DATABASE_URL: expects a postgres:// or postgresql:// URL');
      expect(message).not.toContain('secret-pw');
    }
  });

  it('takes worker tokens and gateway secrets of 32+ visible characters, never echoing a refused one', () => {
    const token = 'w'.repeat(32);
    expect(loadConfig({ SVC_WORKER_TOKEN: token, SVC_GATEWAY_SECRET: token }).SVC_WORKER_TOKEN).toBe(token);
    for (const name of ['SVC_WORKER_TOKEN', 'SVC_GATEWAY_SECRET']) {
      for (const value of ['short-secret-value', `${'s'.repeat(30)} with a space`]) {
        const message = configError({ [name]: value });
        expect(message).toMatch(new RegExp(`^invalid ${name}: expects at least 32 visible ASCII characters`));
        expect(message).not.toContain(value);
      }
    }
    expect(configError({ SVC_API_TOKEN: 'two words' })).not.toContain('two words');
    expect(configError({ SVC_AUTH: 'basic' })).toBe('invalid SVC_AUTH: expects none, token or gateway (got "basic")');
  });

  it('refuses an OTLP endpoint that is not an http(s) URL without echoing the login it may carry', () => {
    for (const name of ['OTEL_EXPORTER_OTLP_ENDPOINT', 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT']) {
      for (const value of ['ftp://collector:otlp-pw@h:4318', 'collector:otlp-pw@h:4318']) {
        const message = configError({ [name]: value });
        expect(message).toMatch(new RegExp(`^invalid ${name}: expects .*http\\(s\\) URL`));
        expect(message).not.toContain('otlp-pw');
      }
    }
  });
});

describe('checkServerAuth', () => {
  it('knows loopback addresses', () => {
    for (const host of ['127.0.0.1', '127.1.2.3', '::1', '[::1]', 'localhost', 'LOCALHOST', '::ffff:127.0.0.1']) expect(isLoopbackHost(host), host).toBe(true);
    for (const host of ['0.0.0.0', '::', '10.0.0.1', '192.168.1.20', 'example.com', '128.0.0.1', '::ffff:10.0.0.1', '127.example.com']) expect(isLoopbackHost(host), host).toBe(false);
  });

  it('refuses SVC_AUTH=none on a non-loopback SVC_HOST, naming both, and gateway without its secret', () => {
    expect(() => checkServerAuth(loadConfig({}))).not.toThrow();
    expect(() => checkServerAuth(loadConfig({ SVC_HOST: '0.0.0.0' }))).toThrow(ConfigError);
    expect(() => checkServerAuth(loadConfig({ SVC_HOST: '0.0.0.0' }))).toThrow(/^SVC_HOST=0\.0\.0\.0 .*SVC_AUTH=none/);
    expect(() => checkServerAuth(loadConfig({ SVC_HOST: '0.0.0.0', SVC_AUTH: 'token' }))).not.toThrow();
    expect(() => checkServerAuth(loadConfig({ SVC_HOST: '0.0.0.0', SVC_AUTH: 'gateway' }))).toThrow(/^SVC_GATEWAY_SECRET is required/);
    expect(() => checkServerAuth(loadConfig({ SVC_HOST: '0.0.0.0', SVC_AUTH: 'gateway', SVC_GATEWAY_SECRET: 'g'.repeat(32) }))).not.toThrow();
  });
});

describe('secrets from files (X_FILE)', () => {
  it('reads a secret variable from the file its _FILE names, trimmed', () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-config-'));
    const file = join(dir, 'token');
    writeFileSync(file, `${'t'.repeat(40)}\n`);
    try {
      expect(loadConfig({ SVC_WORKER_TOKEN_FILE: file }).SVC_WORKER_TOKEN).toBe('t'.repeat(40));
      // The variable itself wins over its file.
      expect(loadConfig({ SVC_WORKER_TOKEN: 'u'.repeat(40), SVC_WORKER_TOKEN_FILE: file }).SVC_WORKER_TOKEN).toBe('u'.repeat(40));
      expect(loadClientConfig(undefined, { SVC_API_TOKEN_FILE: file }).SVC_API_TOKEN).toBe('t'.repeat(40));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('an unreadable file is a ConfigError naming the variable, never the value', () => {
    expect(() => loadConfig({ SVC_ENCRYPTION_KEY_FILE: '/nonexistent/key' })).toThrow(/^invalid SVC_ENCRYPTION_KEY_FILE: cannot read \/nonexistent\/key \(ENOENT\)$/);
  });

  it('only secret variables have a _FILE form', () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-config-'));
    writeFileSync(join(dir, 'port'), '9999');
    try {
      expect(loadConfig({ SVC_PORT_FILE: join(dir, 'port') }).SVC_PORT).toBe(8082);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
