import * as v from 'valibot';

/** A string that parses as an absolute http: or https: URL (one check, so nothing runs on a non-URL). */
export const HttpUrl = v.pipe(
  v.string(),
  v.check((text) => URL.canParse(text) && /^https?:$/.test(new URL(text).protocol), 'an http or https URL'),
);
