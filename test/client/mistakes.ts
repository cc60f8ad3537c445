// Mistakes a client could make, each of which `tsc --strict` must refuse against the types generated from the
// OpenAPI document: test/typed-client.test.ts compiles this beside crud.ts and expects an error on every line marked
// `// wrong:` and on no other line. Excluded from the main tsconfig, like crud.ts.
import createClient from 'openapi-fetch';
import type { components, paths } from './leadbook-api.js';

type ContactInput = components['schemas']['ContactInput'];

export async function mistakes(baseUrl: string) {
  const client = createClient<paths>({ baseUrl });
  const byId = { params: { path: { id: '1' } } };

  const misspelt: ContactInput = { name: 'Ada', emial: 'ada@example.com' }; // wrong: no such field
  await client.POST('/api/v1/contacts', { body: { name: 'Ada', city: 42 } }); // wrong: a number for a string
  await client.POST('/api/v1/inquiries', { body: { contact_id: 'one' } }); // wrong: a string for an integer
  await client.GET('/api/v1/contact/{id}', byId); // wrong: no such path
  await client.PUT('/api/v1/contacts/{id}', byId); // wrong: no such method on it
  await client.GET('/api/v1/contacts/{id}', { params: { path: { id: 1 } } }); // wrong: the id is a digit string
  await client.GET('/api/v1/contacts/{id}', { params: { path: {} } }); // wrong: the id is missing
  await client.GET('/api/v1/contacts', { params: { query: { per_page: 'ten' } } }); // wrong: per_page is an integer
  await client.GET('/api/v1/contacts', { params: { query: { filter: { emial: 'a' } } } }); // wrong: no such field
  const ifMatch = { path: { id: '1' }, header: { 'if-matches': '"a"' } };
  await client.PATCH('/api/v1/contacts/{id}', { params: ifMatch, body: {} }); // wrong: no such header
  await client.DELETE('/api/v1/contacts/{id}', { ...byId, body: { name: 'Ada' } }); // wrong: a delete has no body

  const { data, error } = await client.GET('/api/v1/contacts/{id}', byId);
  const email: string | undefined = data?.data.email; // wrong: email may be null
  const renamed = data?.data.emial; // wrong: the answer has no such field
  const count: string | undefined = data?.data.inquiries_count; // wrong: a count is a number
  const code: number | undefined = error?.code; // wrong: a problem's code is a string
  const created = await client.POST('/api/v1/contacts', { body: {} });
  const total: number | undefined = created.data?.meta.total; // wrong: a created record has no meta
  return [misspelt, email, renamed, count, code, total];
}
