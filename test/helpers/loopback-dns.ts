// Webhooks that a test makes without saying where they go (the generic record tests' sample URLs, example.org)
// reach nothing outside the machine: every name resolves to 127.0.0.1 through one DNS stub per test process (so a
// URL is checked when saved as it would be), and sending is paused (WEBHOOKS_CONCURRENCY=0), so that no delivery
// fails in the background and changes an endpoint's `failing_since` under a test that compares rows. An app started
// by a test (in process or as `leadbook serve`) gets these settings unless the test gives its own (the webhook tests).
import { startDnsStub } from './dns-stub.ts';

const stub = await startDnsStub({ '*': '127.0.0.1' });
// The stub never keeps a finished test process alive.
stub.unref();

export const WEBHOOKS_STAY_HOME: Readonly<Record<string, string>> = {
  WEBHOOKS_ALLOW_PRIVATE: 'true',
  WEBHOOKS_DNS_SERVERS: stub.servers.join(','),
  WEBHOOKS_CONCURRENCY: '0',
};
