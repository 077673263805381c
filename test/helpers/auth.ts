// Credentials of test servers: one worker token for every test server and `svc` process (the
// servers the helpers start take it, their workers present it).

/** SVC_WORKER_TOKEN of test servers and of the `svc` processes tests spawn. */
export const TEST_WORKER_TOKEN = 'test-worker-token-0123456789abcdefghijklmnopqrstuvwxyz';

/** Headers of a request with `Authorization: Bearer <token>`. */
export const bearer = (token: string): Record<string, string> => ({ authorization: `Bearer ${token}` });

/** Headers of a request as a worker (the test worker token). */
export const asWorker: Record<string, string> = bearer(TEST_WORKER_TOKEN);
