// A program written against the types that openapi-typescript generates from the app's OpenAPI document
// (leadbook-api.d.ts, beside this file once test/typed-client.test.ts or `npm run client -- --out` wrote it there).
// Paths, parameters, bodies and answers are named only through those types, with no cast and no `any`: when the
// document and the app disagree, either `tsc --strict` refuses this file or one of its steps fails when it runs.
// It is excluded from the main tsconfig, since the file it imports exists only where it was generated.
import createClient, { type Middleware } from 'openapi-fetch';
import type { components, paths } from './leadbook-api.js';

type Problem = components['schemas']['Problem'];
// Bodies are written as values of the document's input types: openapi-fetch infers a call's options, so it does not
// flag a misspelt optional field in a body literal given inline (openapi-typescript issue 1769); a typed value does.
type ContactInput = components['schemas']['ContactInput'];
type InquiryInput = components['schemas']['InquiryInput'];

export interface CrudOptions {
  /** The app's address, e.g. http://127.0.0.1:3000. */
  baseUrl: string;
  /** A personal access token, sent as a bearer token. */
  token: string;
  /** openapi-fetch middleware, e.g. to watch every answer. */
  middleware?: Middleware[];
}

/** A step and the status it was answered with, in order: what the test compares with what it expects. */
export type Transcript = [step: string, status: number][];

/** openapi-fetch's result: the answer's body when it succeeded, the error body when not. */
interface Result<T, E> {
  data?: T;
  error?: E;
  response: Response;
}

export async function crud({ baseUrl, token, middleware = [] }: CrudOptions) {
  const client = createClient<paths>({ baseUrl, headers: { authorization: `Bearer ${token}` } });
  client.use(...middleware);
  const transcript: Transcript = [];

  /** The body of a successful answer with the status expected; anything else ends the run. */
  const ok = <T, E>(step: string, status: number, result: Result<T, E>): T => {
    transcript.push([step, result.response.status]);
    if (result.response.status !== status || result.data === undefined)
      throw new Error(`${step}: expected ${status}, got ${result.response.status} ${JSON.stringify(result.error)}`);
    return result.data;
  };
  /** The problem of a failed answer with the status expected. */
  const failed = <T>(step: string, status: number, result: Result<T, Problem>): Problem => {
    transcript.push([step, result.response.status]);
    if (result.response.status !== status || result.error === undefined)
      throw new Error(`${step}: expected ${status}, got ${result.response.status}`);
    return result.error;
  };
  /** An answer with no body (204, 304). */
  const empty = <T, E>(step: string, status: number, result: Result<T, E>): void => {
    transcript.push([step, result.response.status]);
    if (result.response.status !== status)
      throw new Error(`${step}: expected ${status}, got ${result.response.status}`);
  };
  const etagOf = (step: string, response: Response): string => {
    const etag = response.headers.get('etag');
    if (!etag) throw new Error(`${step}: no ETag`);
    return etag;
  };
  const check = (step: string, condition: boolean) => {
    if (!condition) throw new Error(`${step}: not as expected`);
  };

  // A contact, under an address no other test uses, so the list below finds it alone.
  const email = `ada.${Date.now().toString(36)}.${Math.random().toString(36).slice(2, 8)}@example.com`;
  const newContact: ContactInput = { name: 'Ada Lovelace', email, city: 'London', phone: null };
  const createdContact = await client.POST('/api/v1/contacts', { body: newContact });
  const contact = ok('create contact', 201, createdContact).data;
  const contactId = String(contact.id);
  check('create contact', contact.name === 'Ada Lovelace' && contact.phone === null && contact.inquiries_count === 0);
  check('contact Location', createdContact.response.headers.get('location') === `/api/v1/contacts/${contactId}`);
  const contactEtag = etagOf('create contact', createdContact.response);

  const contacts = ok(
    'list contacts by email',
    200,
    await client.GET('/api/v1/contacts', { params: { query: { filter: { email }, per_page: 10 } } }),
  );
  check('list contacts by email', contacts.data.length === 1 && contacts.data[0]?.id === contact.id);
  check('list meta', contacts.meta.total === 1 && contacts.meta.per_page === 10);

  const byId = { params: { path: { id: contactId } } };
  const read = await client.GET('/api/v1/contacts/{id}', byId);
  check('get contact', ok('get contact', 200, read).data.email === email);
  check('get contact ETag', etagOf('get contact', read.response) === contactEtag);
  empty(
    'get contact unchanged',
    304,
    await client.GET('/api/v1/contacts/{id}', {
      params: { path: { id: contactId }, header: { 'if-none-match': contactEtag } },
    }),
  );

  const move: ContactInput = { city: 'Paris' };
  const patchedContact = await client.PATCH('/api/v1/contacts/{id}', {
    params: { path: { id: contactId }, header: { 'if-match': contactEtag } },
    body: move,
  });
  check('patch contact', ok('patch contact', 200, patchedContact).data.city === 'Paris');
  const newContactEtag = etagOf('patch contact', patchedContact.response);
  check('patch contact ETag', newContactEtag !== contactEtag);
  const staleContact = failed(
    'patch contact, stale If-Match',
    412,
    await client.PATCH('/api/v1/contacts/{id}', {
      params: { path: { id: contactId }, header: { 'if-match': contactEtag } },
      body: { city: 'Lost update' } satisfies ContactInput,
    }),
  );
  check('stale contact problem', staleContact.code === 'precondition_failed' && staleContact.status === 412);

  // An inquiry of that contact.
  const newInquiry: InquiryInput = {
    name: 'Analytical engine',
    contact_id: contact.id,
    status: true,
    ticket_date: '2026-01-02',
  };
  const createdInquiry = await client.POST('/api/v1/inquiries', { body: newInquiry });
  const inquiry = ok('create inquiry', 201, createdInquiry).data;
  const inquiryId = String(inquiry.id);
  check('create inquiry', inquiry.contact_id === contact.id && inquiry.status === true && inquiry.overdue === false);
  check('inquiry date', inquiry.ticket_date === '2026-01-02T00:00:00.000Z');
  check('inquiry Location', createdInquiry.response.headers.get('location') === `/api/v1/inquiries/${inquiryId}`);
  const inquiryEtag = etagOf('create inquiry', createdInquiry.response);

  const inquiries = ok(
    'list inquiries by contact',
    200,
    await client.GET('/api/v1/inquiries', { params: { query: { filter: { contact_id: contactId } } } }),
  );
  check('list inquiries by contact', inquiries.data.length === 1 && inquiries.data[0]?.id === inquiry.id);
  const counted = ok('get contact', 200, await client.GET('/api/v1/contacts/{id}', byId)).data;
  check('inquiries_count', counted.inquiries_count === 1);
  check('stale patch changed nothing', counted.city === 'Paris');

  const inquiryById = { params: { path: { id: inquiryId } } };
  const readInquiry = await client.GET('/api/v1/inquiries/{id}', inquiryById);
  check('get inquiry', ok('get inquiry', 200, readInquiry).data.name === 'Analytical engine');
  check('get inquiry ETag', etagOf('get inquiry', readInquiry.response) === inquiryEtag);

  const close: InquiryInput = { status: false, inquiry_country: 'UK' };
  const patchedInquiry = await client.PATCH('/api/v1/inquiries/{id}', {
    params: { path: { id: inquiryId }, header: { 'if-match': inquiryEtag } },
    body: close,
  });
  const changed = ok('patch inquiry', 200, patchedInquiry).data;
  check('patch inquiry', changed.status === false && changed.inquiry_country === 'UK');
  const newInquiryEtag = etagOf('patch inquiry', patchedInquiry.response);
  const staleInquiry = failed(
    'patch inquiry, stale If-Match',
    412,
    await client.PATCH('/api/v1/inquiries/{id}', {
      params: { path: { id: inquiryId }, header: { 'if-match': inquiryEtag } },
      body: { status: true } satisfies InquiryInput,
    }),
  );
  check('stale inquiry problem', staleInquiry.code === 'precondition_failed');

  // Deleting: the inquiry with its current ETag, then the contact.
  empty(
    'delete inquiry',
    204,
    await client.DELETE('/api/v1/inquiries/{id}', {
      params: { path: { id: inquiryId }, header: { 'if-match': newInquiryEtag } },
    }),
  );
  const goneInquiry = failed('get deleted inquiry', 404, await client.GET('/api/v1/inquiries/{id}', inquiryById));
  check('deleted inquiry problem', goneInquiry.code === 'not_found');
  empty(
    'delete contact',
    204,
    await client.DELETE('/api/v1/contacts/{id}', {
      params: { path: { id: contactId }, header: { 'if-match': newContactEtag } },
    }),
  );
  const goneContact = failed('get deleted contact', 404, await client.GET('/api/v1/contacts/{id}', byId));
  check('deleted contact problem', goneContact.code === 'not_found');

  return { transcript, contact, inquiry: changed };
}
