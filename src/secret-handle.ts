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
 * A workload's `access_token` still to be sealed: a non-empty string that is not a handle already
 * (a retry's or a child's copy of its parent's handle is passed on as it is, never sealed twice).
 */
export function plainAccessToken(workload: Record<string, unknown>): string | undefined {
  const token = workload.access_token;
  return typeof token === 'string' && token !== '' && secretHandleId(token) === undefined ? token : undefined;
}
