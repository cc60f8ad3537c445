// Standard Webhooks signatures (https://www.standardwebhooks.com): a secret is
// `whsec_` and the base64 of 32 random bytes; a message is signed with
// HMAC-SHA256 under the secret's bytes over "id.timestamp.body", and the
// `webhook-signature` header lists `v1,<base64>` for each secret that signs it
// (two while a rotated secret's grace period runs), separated by spaces.
import { createHmac, randomBytes } from 'node:crypto';

const PREFIX = 'whsec_';

export const newSecret = () => PREFIX + randomBytes(32).toString('base64');

const keyOf = (secret: string) => Buffer.from(secret.slice(PREFIX.length), 'base64');

/** The `webhook-signature` header of one message under each of `secrets`. */
export function signatureHeader(secrets: readonly string[], id: string, timestamp: number, body: string): string {
  return secrets
    .map((secret) => `v1,${createHmac('sha256', keyOf(secret)).update(`${id}.${timestamp}.${body}`).digest('base64')}`)
    .join(' ');
}
