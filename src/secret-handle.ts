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
