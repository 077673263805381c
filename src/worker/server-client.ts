/** An HTTP error answer from the server, with its status and `detail`. Never carries request bodies. */
export class ServerError extends Error {
  override name = 'ServerError';
  readonly status: number;
  readonly detail: unknown;
  constructor(status: number, detail: unknown, what: string) {
    super(`${what}: HTTP ${status}${typeof detail === 'string' ? ` ${detail}` : detail && typeof detail === 'object' && 'message' in detail ? ` ${String(detail.message)}` : ''}`);
    this.status = status;
    this.detail = detail;
  }
}

/** Workers reach the server over HTTP only; this is that one door. */
export class ServerClient {
  readonly baseUrl: string;

  constructor(baseUrl: string) {
    this.baseUrl = baseUrl.replace(/\/+$/, '');
  }

  /** JSON request; throws ServerError for non-2xx answers, TypeError for network failures. */
  async request<T>(method: string, path: string, body?: unknown, signal?: AbortSignal): Promise<T> {
    const res = await fetch(this.baseUrl + path, {
      method,
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal,
    });
    const text = await res.text();
    let parsed: unknown = null;
    if (text) {
      try {
        parsed = JSON.parse(text);
      } catch {
        parsed = text;
      }
    }
    if (!res.ok) {
      const detail = parsed && typeof parsed === 'object' && 'detail' in parsed ? parsed.detail : parsed;
      throw new ServerError(res.status, detail, `${method} ${path.split('?')[0]}`);
    }
    return parsed as T;
  }
}
