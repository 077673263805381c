// An execution label's key, one rule for the server (start, list filter) and the CLI's checks.

/** A label key: a letter or _, then letters, digits, _ . - (at most 64 characters). */
export const LABEL_KEY = /^[A-Za-z_][A-Za-z0-9_.-]{0,63}$/;
/** What a key breaking LABEL_KEY is told. */
export const LABEL_KEY_RULE = 'letters, digits, _ . - (at most 64)';
