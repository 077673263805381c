// The stand-in for a secret an execution request carried (`workload.access_token`): the event log
// and commands hold the handle; workers exchange it for the value (GET /api/secrets/{uuid}).

const SECRET_HANDLE = /^svc-secret:([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/;

/** The handle text for a stored secret's uuid. */
export function secretHandle(uuid: string): string {
  return `svc-secret:${uuid}`;
}

/** The uuid of a handle, or undefined when `value` is not one. */
export function secretHandleId(value: unknown): string | undefined {
  return typeof value === 'string' ? SECRET_HANDLE.exec(value)?.[1] : undefined;
}

/**
 * The `access_token` still to be sealed: any non-empty string, a handle's text included, unless it
 * is the caller's own workload's (`own`: a retry's, a resume's, or a child given its parent's
 * handle), whose handle is passed on as it is, never sealed twice.
 */
export function tokenToSeal(given: unknown, own: boolean): string | undefined {
  if (typeof given !== 'string' || given === '') return undefined;
  return own && secretHandleId(given) !== undefined ? undefined : given;
}
