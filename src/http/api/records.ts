// One generic CRUD plugin, registered once per resource. Routes are thin: they
// read the request, call an operation, and write the answer.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { activitySchema, createdSchema, listQuerySchema, schemaIds } from '../../derive/api-schema.ts';
import type { Database } from '../../db/connection.ts';
import {
  createRecord,
  deleteRecord,
  getRecord,
  listRecords,
  recordActivity,
  restoreChange,
  updateRecord,
  withCounts,
} from '../../records/operations.ts';
import { annotationsOf, type Resource } from '../../schema/resource.ts';
import { confirmed } from '../auth.ts';
import { contextOf } from '../context.ts';
import { problem } from '../openapi.ts';

type IdRequest = FastifyRequest<{ Params: { id: string } }>;

const bodyProblems = {
  400: problem('malformed JSON'),
  413: problem('body over 1 MiB'),
  415: problem('not application/json'),
  422: problem('invalid fields, each named in errors'),
};

function ifMatchOf(request: FastifyRequest): string | undefined {
  const value = request.headers['if-match'];
  return Array.isArray(value) ? value.join(',') : value;
}

export function recordRoutes(database: Database, resource: Resource) {
  const ids = schemaIds(resource);
  const tags = [resource.name];
  const params = { type: 'object', properties: { id: { type: 'string', pattern: '^[0-9]+$' } }, required: ['id'] };
  const location = (id: unknown) => `/api/v1/${resource.name}/${String(id)}`;
  const withEtag = (reply: FastifyReply, etag: string) => reply.header('ETag', etag);
  const ifMatchHeader = {
    type: 'object',
    properties: {
      'if-match': { type: 'string', description: 'the ETag you read; a stale one gives 412 and changes nothing' },
    },
  };
  const changedResponses = (description: string) => ({
    200: { description, $ref: `${ids.one}#`, headers: { ETag: { type: 'string' } } },
    404: problem('no such record'),
    412: problem('the record changed since it was read'),
    ...bodyProblems,
  });
  /** A write over a record that answers it as it is now, with its ETag: a patch, an undo. */
  const rewrite = (write: typeof updateRecord) => async (request: IdRequest, reply: FastifyReply) => {
    const { record, etag, counts } = await confirmed(request, () =>
      write(contextOf(database, request), resource, request.params.id, request.body, ifMatchOf(request)),
    );
    withEtag(reply, etag);
    return { data: await withCounts(contextOf(database, request), resource, record, counts) };
  };

  return async function plugin(app: FastifyInstance) {
    app.get(
      '',
      {
        schema: {
          tags,
          summary: `List ${resource.name}`,
          ...(resource.readScope && {
            description:
              `Below the ${resource.readScope.all} role, only your own ${resource.name}` +
              (resource.readScope.sharedWhen ? ` and those with ${resource.readScope.sharedWhen} true` : '') +
              ' are listed (and readable by id: the others answer 404).',
          }),
          querystring: listQuerySchema(resource),
          response: {
            200: { description: 'one page of records', $ref: `${ids.list}#` },
            422: problem('invalid list parameters'),
          },
        },
      },
      (request) => listRecords(contextOf(database, request), resource, request.query as Record<string, unknown>),
    );

    app.get(
      '/:id',
      {
        config: { confirmsToken: true },
        schema: {
          tags,
          summary: `Get a ${resource.singular}`,
          params,
          headers: {
            type: 'object',
            properties: {
              'if-none-match': { type: 'string', description: 'ETags you hold; the current one among them gives 304' },
            },
          },
          response: {
            200: { description: 'the record', $ref: `${ids.one}#`, headers: { ETag: { type: 'string' } } },
            304: { description: 'not modified', type: 'null', headers: { ETag: { type: 'string' } } },
            404: problem('no such record'),
          },
        },
      },
      async (request: IdRequest, reply) => {
        const { record, etag, counts } = await confirmed(request, () =>
          getRecord(contextOf(database, request), resource, request.params.id, 'read', { withCounts: true }),
        );
        withEtag(reply, etag);
        if (
          request.headers['if-none-match']
            ?.split(',')
            .map((t) => t.trim())
            .includes(etag)
        )
          return reply.code(304).send();
        return { data: { ...record, ...counts } };
      },
    );

    app.get(
      '/:id/activity',
      {
        schema: {
          tags,
          summary: `The timeline of a ${resource.singular}: its changes, newest first, with who made them and how`,
          params,
          querystring: {
            type: 'object',
            properties: { cursor: { type: 'string', description: 'meta.next_cursor of the page before' } },
            additionalProperties: false,
          },
          response: {
            200: { description: 'one page of entries', ...activitySchema(resource) },
            404: problem('no such record'),
          },
        },
      },
      (request: FastifyRequest<{ Params: { id: string }; Querystring: { cursor?: string } }>) =>
        recordActivity(contextOf(database, request), resource, request.params.id, request.query.cursor),
    );

    app.post(
      '',
      {
        config: { confirmsToken: true },
        schema: {
          tags,
          summary: `Create a ${resource.singular}`,
          body: { $ref: `${ids.input}#` },
          response: {
            201: {
              description: 'created',
              ...createdSchema(resource),
              headers: { Location: { type: 'string' }, ETag: { type: 'string' } },
            },
            ...bodyProblems,
          },
        },
      },
      async (request, reply) => {
        const { record, etag, reveal, counts } = await confirmed(request, () =>
          createRecord(contextOf(database, request), resource, request.body),
        );
        withEtag(reply, etag).header('Location', location(record[resource.primaryKey.name]));
        const data = await withCounts(contextOf(database, request), resource, record, counts);
        return reply.code(201).send({ data, ...reveal });
      },
    );

    app.patch(
      '/:id',
      {
        config: { confirmsToken: true },
        schema: {
          tags,
          summary: `Change some fields of a ${resource.singular}`,
          params,
          body: { $ref: `${ids.input}#` },
          headers: ifMatchHeader,
          response: changedResponses('the changed record'),
        },
      },
      rewrite(updateRecord),
    );

    app.post(
      '/:id/restore',
      {
        schema: {
          tags,
          summary: `Undo a change of a ${resource.singular}: put back the values its fields had before it`,
          params,
          body: {
            type: 'object',
            properties: { change_id: { type: 'integer', format: 'int64', description: 'an entry of its activity' } },
            required: ['change_id'],
          },
          headers: ifMatchHeader,
          response: changedResponses('the record as it is now'),
        },
      },
      rewrite(restoreChange),
    );

    // A record that others annotate (notes on a contact) takes them at its own address.
    for (const { resource: other, field } of annotationsOf(resource)) {
      const otherIds = schemaIds(other);
      app.post(
        `/:id/${other.name}`,
        {
          schema: {
            tags,
            summary: `Add a ${other.singular} to a ${resource.singular}`,
            params,
            body: { $ref: `${otherIds.input}#` },
            response: {
              201: {
                description: 'created',
                $ref: `${otherIds.one}#`,
                headers: { Location: { type: 'string' }, ETag: { type: 'string' } },
              },
              404: problem(`no such ${resource.singular}`),
              ...bodyProblems,
            },
          },
        },
        async (request: IdRequest, reply) => {
          const ctx = contextOf(database, request);
          const { record: parent } = await getRecord(ctx, resource, request.params.id);
          const body = typeof request.body === 'object' && request.body !== null ? request.body : {};
          const { record, etag } = await createRecord(ctx, other, { ...body, [field.name]: parent.id });
          withEtag(reply, etag).header('Location', `/api/v1/${other.name}/${String(record.id)}`);
          return reply.code(201).send({ data: await withCounts(ctx, other, record) });
        },
      );
    }

    app.delete(
      '/:id',
      {
        schema: {
          tags,
          summary: resource.trash
            ? `Delete a ${resource.singular}: it waits in the trash, restorable, with what its deletion took along`
            : `Delete a ${resource.singular}`,
          params,
          headers: ifMatchHeader,
          ...(resource.referencedBy.some(({ field }) => field.assignee)
            ? {
                querystring: {
                  type: 'object',
                  properties: {
                    reassign_to: { type: 'string', description: 'who takes over the work still assigned to it' },
                  },
                },
              }
            : {}),
          response: {
            204: { description: 'deleted', type: 'null' },
            404: problem('no such record'),
            409: problem('still referenced, or (a user) still has work assigned: give reassign_to'),
            412: problem('the record changed since it was read'),
          },
        },
      },
      async (request: IdRequest, reply) => {
        await deleteRecord(
          contextOf(database, request),
          resource,
          request.params.id,
          ifMatchOf(request),
          request.query as Record<string, unknown>,
        );
        return reply.code(204).send();
      },
    );
  };
}
