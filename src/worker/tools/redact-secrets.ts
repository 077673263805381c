import type { ResolvedCredential } from './types.ts';

// Credential fields whose values are secrets. Matching on the key (not every string of the
// credential) keeps names such as host or user readable in database error messages.
const SECRET_KEY_PATTERN = /pass|secret|token|key|private|credential|connection_string|^url$|^dsn$|^value$/i;
const REDACTED = '[redacted]';

/** Every secret string held by a credential (nested objects included), and the password of any URL. */
export function credentialSecrets(credential: ResolvedCredential | undefined): string[] {
  if (!credential) return [];
  const secrets: string[] = [];
  const visit = (value: unknown, secretKey: boolean): void => {
    if (typeof value === 'string') {
      if (secretKey && value.length > 0) secrets.push(value, ...urlSecrets(value));
    } else if (Array.isArray(value)) {
      for (const item of value) visit(item, secretKey);
    } else if (value !== null && typeof value === 'object') {
      for (const [key, item] of Object.entries(value)) visit(item, secretKey || SECRET_KEY_PATTERN.test(key));
    }
  };
  visit(credential.data, false);
  return secrets;
}

/** The password (raw and decoded) of a URL-like string such as a connection string. */
export function urlSecrets(text: string): string[] {
  try {
    const { password } = new URL(text);
    return password ? [password, decodeURIComponent(password)] : [];
  } catch {
    return [];
  }
}

/** `text` with every occurrence of each secret replaced; longest first so overlaps are covered. */
export function redactSecrets(text: string, secrets: readonly string[]): string {
  const ordered = [...new Set(secrets)].filter((s) => s.length > 0).sort((a, b) => b.length - a.length);
  let result = text;
  for (const secret of ordered) result = result.split(secret).join(REDACTED);
  return result;
}
