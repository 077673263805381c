// The OpenTelemetry specification (and every SDK) names the service from OTEL_SERVICE_NAME, else
// from `service.name` in OTEL_RESOURCE_ATTRIBUTES, which is how many deployments set it (one
// variable for every resource attribute): a real server exporting to a real OTLP receiver keeps
// that name, and OTEL_SERVICE_NAME, when given, still wins over it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config.ts';
import { startTracing, type Tracing } from '../../../src/telemetry/start-tracing.ts';
import { startOtlpReceiver, type OtlpReceiver } from '../../helpers/otlp-receiver.ts';
import { startTestStack, type TestStack } from '../../helpers/stack.ts';
import { until } from '../../helpers/until.ts';

const PLAYBOOK = `apiVersion: svc/v1
metadata: { name: named, path: traces/named }
workflow:
  - step: start
    tool: { name: n, kind: noop }
`;

let receiver: OtlpReceiver;
let stack: TestStack;
const tracings: Tracing[] = [];

const base = () => ({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_BSP_SCHEDULE_DELAY: '20', OTEL_RESOURCE_ATTRIBUTES: 'service.name=orders-prod,deployment.environment=prod' });

beforeAll(async () => {
  receiver = await startOtlpReceiver();
  stack = await startTestStack({ env: base() });
  await stack.register(PLAYBOOK);
});

afterAll(async () => {
  await stack?.close();
  for (const t of tracings) await t.shutdown();
  await receiver?.close();
});

/** Runs the playbook with traces as `env` configures them; the resource of its execution's span. */
async function resourceOf(env: Record<string, string>): Promise<Record<string, string | number | boolean>> {
  const tracing = startTracing(loadConfig(env), { db: stack.deps.db, log: stack.deps.log })!;
  tracings.push(tracing);
  stack.deps.traces = tracing;
  const id = await stack.run('traces/named');
  expect((await stack.wait(id)).status).toBe('completed');
  await tracing.flush();
  const span = await until('the execution\'s span', () => receiver.spans.find((s) => s.name === 'playbook traces/named' && s.attributes['svc.execution.id'] === id), 10_000);
  return span.resource;
}

describe('service.name', () => {
  it('is the one OTEL_RESOURCE_ATTRIBUTES gives when OTEL_SERVICE_NAME is unset', async () => {
    const resource = await resourceOf(base());
    expect(resource['service.name']).toBe('orders-prod');
    expect(resource['deployment.environment']).toBe('prod');
  });

  it('is OTEL_SERVICE_NAME when both are set, and svc when neither is', async () => {
    expect((await resourceOf({ ...base(), OTEL_SERVICE_NAME: 'orders-canary' }))['service.name']).toBe('orders-canary');
    expect((await resourceOf({ ...base(), OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment=prod' }))['service.name']).toBe('svc');
  });
});
