// Teammates with a role, each with a bearer token of their own.
import type { TestApp } from './app.ts';

export interface Teammate {
  id: bigint | number;
  name: string;
  email: string;
  password: string;
  token: string;
}

let made = 0;

/** Creates a user with `role` (as the admin) and mints their token. */
export async function teammate(app: TestApp, role: string, name = `${role} ${++made}`): Promise<Teammate> {
  const email = `${name.toLowerCase().replace(/[^a-z0-9]+/g, '.')}.${made}@example.org`;
  const password = `a passphrase for ${name} 42`;
  const created = await app.post('/api/v1/users', { name, email, password, role });
  if (created.status !== 201) throw new Error(`creating ${role}: ${created.status} ${created.text}`);
  const minted = await app.request('POST', '/api/v1/auth/token', {
    json: { email, password, device_name: 'test' },
    token: null,
  });
  if (minted.status !== 201) throw new Error(`token for ${role}: ${minted.status} ${minted.text}`);
  return { id: created.body.data.id, name, email, password, token: minted.body.token as string };
}
