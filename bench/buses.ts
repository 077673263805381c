/** The buses a multi-server bench compares (src/bus/): PostgreSQL LISTEN/NOTIFY, and NATS JetStream. */
export const BUSES = ['postgres', 'nats'] as const;
export type Bus = (typeof BUSES)[number];
