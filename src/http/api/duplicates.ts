// Duplicates of contacts: the groups that look like one person, merging one into a kept contact, and undoing a merge
// (CONTRACT.md, "Import preview, rollback, duplicates").
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Database } from '../../db/connection.ts';
import { schemaIds } from '../../derive/api-schema.ts';
import {
  DUPLICATE_KEYS,
  DUPLICATES_PER_PAGE,
  findDuplicates,
  MERGE_MAX,
  mergeContacts,
  undoMerge,
} from '../../records/duplicates.ts';
import { withCounts } from '../../records/operations.ts';
import { contact } from '../../resources/index.ts';
import { contextOf } from '../context.ts';
import { problem } from '../openapi.ts';

const ids = schemaIds(contact);
/** The contact as `GET /contacts/:id` answers it, with its counts. */
const record = { $ref: `${ids.one}#/properties/data` };
const id = { type: 'integer', format: 'int64' };

const group = {
  type: 'object',
  properties: {
    reasons: {
      type: 'array',
      description: 'every key its members share; a name_city value reads "name, city", folded',
      items: {
        type: 'object',
        properties: {
          by: { type: 'string', enum: DUPLICATE_KEYS.map((k) => k.by) },
          value: { type: 'string', description: 'the shared key: the address lower-cased, the number in E.164' },
        },
        required: ['by', 'value'],
      },
    },
    contacts: { type: 'array', items: { $ref: `${ids.record}#` }, description: 'the members, by id' },
  },
  required: ['reasons', 'contacts'],
};

const mergeBody = {
  type: 'object',
  properties: {
    keep: { ...id, description: 'the contact that stays' },
    merge: {
      type: 'array',
      items: id,
      minItems: 1,
      maxItems: MERGE_MAX,
      description: 'the contacts merged into it: their records move to it, they go to the trash',
    },
    fields: {
      type: 'object',
      additionalProperties: id,
      description: 'for a field, the contact (kept or merged) whose value the kept contact takes: {"phone": 12}',
    },
  },
  required: ['keep', 'merge'],
  additionalProperties: false,
};

export function duplicateRoutes(database: Database) {
  const context = (request: FastifyRequest) => contextOf(database, request);
  return async function plugin(app: FastifyInstance) {
    app.get(
      '/contacts/duplicates',
      {
        schema: {
          tags: [contact.name],
          summary: 'Groups of contacts that look like the same person',
          description:
            'Contacts sharing a normalised email (trimmed, lower-cased), a phone number in E.164 (read in ' +
            'DEFAULT_COUNTRY when written without a country code), or the same name and city (case, accents and ' +
            'spaces ignored). Found per key with one GROUP BY … HAVING count(*) > 1 over its index, then the members ' +
            'of those values with WHERE key IN (…): never by comparing contacts pair by pair. Groups with the same ' +
            'members found by several keys are one group listing every reason. Ordered by their smallest contact ' +
            'id; keyset-paged by it (`cursor` = `meta.next_cursor`). Groups starting at the same contact are never ' +
            'split, so a page may hold more than per_page when they tie at its end.',
          querystring: {
            type: 'object',
            properties: {
              per_page: {
                type: 'integer',
                minimum: 1,
                maximum: DUPLICATES_PER_PAGE.max,
                default: DUPLICATES_PER_PAGE.default,
              },
              cursor: { type: 'string', description: 'meta.next_cursor of the page before' },
            },
            additionalProperties: false,
          },
          response: {
            200: {
              description: 'one page of groups',
              type: 'object',
              properties: {
                data: { type: 'array', items: group },
                meta: {
                  type: 'object',
                  properties: { per_page: { type: 'integer' }, next_cursor: { type: ['string', 'null'] } },
                  required: ['per_page', 'next_cursor'],
                },
              },
              required: ['data', 'meta'],
            },
            403: problem('your role may not read contacts'),
            422: problem('an invalid per_page or cursor, or an unknown parameter'),
          },
        },
      },
      (request) => findDuplicates(context(request), request.query as Record<string, unknown>),
    );

    app.post(
      '/contacts/merge',
      {
        schema: {
          tags: [contact.name],
          summary: 'Merge contacts into one',
          description:
            'In one transaction: the kept contact takes the values `fields` chooses, every record that references ' +
            'a merged contact (inquiries, notes, tasks) moves to it, and the merged contacts go to the trash ' +
            '(restorable there one by one). One `merged` entry on the kept contact; the moves and deletions are ' +
            `entries it causes. Needs the right to delete anyone's contacts (managers, admins); at most ${MERGE_MAX} ` +
            'at once. POST /contacts/merge/{merge_id}/undo takes it all back.',
          body: mergeBody,
          response: {
            200: {
              description: 'the kept contact as it is now, and the merge (to undo it)',
              type: 'object',
              properties: { data: record, merge_id: { ...id, description: 'the merge’s entry in the change log' } },
              required: ['data', 'merge_id'],
            },
            403: problem('your role may not delete contacts, or may not set a field named in fields'),
            422: problem('invalid fields, each named in errors (`keep`, `merge`, `fields.<field>`)'),
          },
        },
      },
      async (request) => {
        const ctx = context(request);
        const { record, mergeId } = await mergeContacts(ctx, request.body);
        return { data: await withCounts(ctx, contact, record), merge_id: mergeId };
      },
    );

    app.post(
      '/contacts/merge/:merge_id/undo',
      {
        schema: {
          tags: [contact.name],
          summary: 'Undo a merge',
          description:
            'In one transaction, newest first: the merged contacts come back with their ids and values (one ' +
            'restored from the trash meanwhile is left as it is), the records moved to the kept contact go back ' +
            '(those that still name it), and the kept contact gets back its fields and updated_at (those no one ' +
            'changed since). Each is a `restored` entry, caused by the entry it reverses.',
          params: {
            type: 'object',
            properties: { merge_id: { type: 'string', pattern: '^[0-9]+$' } },
            required: ['merge_id'],
          },
          response: {
            200: { description: 'the kept contact as it is now', type: 'object', properties: { data: record } },
            403: problem('your role may not delete contacts'),
            404: problem('no merge has this id'),
            409: problem('the merge was undone already, or the kept contact is deleted'),
            410: problem('a merged contact was emptied from the trash'),
          },
        },
      },
      async (request: FastifyRequest<{ Params: { merge_id: string } }>) => {
        const ctx = context(request);
        return { data: await withCounts(ctx, contact, await undoMerge(ctx, request.params.merge_id)) };
      },
    );
  };
}
