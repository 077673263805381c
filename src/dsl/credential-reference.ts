import * as v from 'valibot';

/** What a credential may be named (the credentials API's rule); an all-digit reference names an id. */
export const CREDENTIAL_REFERENCE = /^[A-Za-z0-9_][A-Za-z0-9_.\-]*$/;
/** The longest credential name the credentials API stores. */
export const MAX_CREDENTIAL_REFERENCE_CHARS = 200;

/**
 * A literal `auth`: the name (or id) of a stored credential, never the credential itself (the
 * spec's Resources section). A pasted token or connection URL is refused at registration, not
 * looked up by every run and quoted in its error events.
 */
export const credentialReference = v.pipe(
  v.string(),
  v.nonEmpty('must not be empty'),
  v.check(
    (text) => text.length <= MAX_CREDENTIAL_REFERENCE_CHARS && CREDENTIAL_REFERENCE.test(text),
    `must name a stored credential (letters, digits, _ . -, at most ${MAX_CREDENTIAL_REFERENCE_CHARS} characters), never hold the credential itself`,
  ),
);
