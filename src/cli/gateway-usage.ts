// Kept apart from gateway-command.ts so `svc --help` does not load the gateway.
export const GATEWAY_SUMMARY = 'run the authenticating gateway (OpenID Connect login, bearer tokens, roles) in front of SVC_SERVER_URL';
export const GATEWAY_USAGE = 'svc gateway [--port N] [--host ADDRESS]';
