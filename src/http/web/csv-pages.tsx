// CSV pages of every records resource: /{resource}/export.csv downloads the
// list as the index shows it (its search, filters and sort); /{resource}/import
// is the import wizard: upload a file (kept as a staged import), match its
// columns to fields, preview what a dry run says, then run it in the background
// and follow it on the Imports page (imports-page.tsx). They call the same
// import engine as the JSON API; no SQL here.
import { Readable } from 'node:stream';
import multipart from '@fastify/multipart';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Database } from '../../db/connection.ts';
import { AppError } from '../../errors.ts';
import { exportCsv, exportFilename } from '../../records/csv.ts';
import { importFields, readMapping } from '../../records/import-columns.ts';
import { inspectCsv, upsertField } from '../../records/import.ts';
import { importStaged, slices, stagedUpload, stageUpload } from '../../records/imports.ts';
import { authorize, type Context } from '../../records/operations.ts';
import type { Resource } from '../../schema/resource.ts';
import { IMPORT_MULTIPART, uploadedCsv, uploadError } from '../csv-upload.ts';
import { contextOf } from '../context.ts';
import { checkCsrf, pageContext, redirectWith } from './context.ts';
import { listQueryOf } from './record-pages.tsx';
import { sendPage } from './render.tsx';
import { type Choices, choicesOf, MatchStep, PreviewStep, UploadStep } from './views/import-wizard.tsx';
import type { Query } from './views/records.tsx';

/** Problems an import page shows next to its form; anything else is the app's error page. */
const SHOWN = new Set([400, 409, 413, 415, 422]);
const shown = (error: unknown): error is AppError => error instanceof AppError && SHOWN.has(error.status);

/**
 * The engine's mapping (header → field, null: left out) of what was picked. A read-only field (an export's `id`)
 * cannot be mapped by hand, but its header names it: left to the engine, which matches it by name.
 */
function optionsOf(resource: Resource, headers: string[], choices: Choices) {
  const readOnly = new Set(importFields(resource).readOnly.map((f) => f.name));
  const mapping: Record<string, string | null> = {};
  headers.forEach((header, i) => {
    const field = choices.picked[i];
    if (field !== undefined && !readOnly.has(field)) mapping[header] = field === '' ? null : field;
  });
  // Checked here, before anything runs: the background run could only tell the Imports page.
  readMapping(resource, mapping);
  const upsertBy = choices.upsertBy || undefined;
  if (upsertBy) upsertField(resource, upsertBy);
  return { mapping, upsertBy };
}

/** Reads an upload whole (the wizard keeps it for its next steps); 413 past the limit. */
async function bytesOf(file: Readable): Promise<Uint8Array> {
  const chunks: Buffer[] = [];
  for await (const chunk of file) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

type WithId = FastifyRequest<{ Params: { id: string } }>;

export function csvPages(database: Database, resource: Resource) {
  return async function plugin(app: FastifyInstance) {
    await app.register(multipart, IMPORT_MULTIPART);
    const base = `/${resource.name}`;
    const csrf = { preHandler: app.csrfProtection };

    const uploadPage = (request: FastifyRequest, reply: FastifyReply, problem?: AppError) =>
      // htmx swaps in only 2xx answers: the page with its message goes to htmx as 200, to a plain form post with its
      // 4xx.
      sendPage(
        reply,
        <UploadStep ctx={pageContext(request, reply)} resource={resource} problem={problem} />,
        problem && !request.headers['hx-request'] ? problem.status : 200,
      );

    /** The staged file of the caller and its columns as the engine reads them (a file it cannot read: step 1). */
    const inspected = async (ctx: Context, id: string) => {
      authorize(ctx, resource, 'import');
      const staged = await stagedUpload(ctx, resource, id);
      return {
        filename: staged.filename,
        inspection: await inspectCsv(ctx, resource, Readable.from(slices(staged.file))),
      };
    };

    /** Runs a step; a problem of the file or of the upload sends the user back to step 1 with it. */
    const step = async (request: FastifyRequest, reply: FastifyReply, run: () => Promise<FastifyReply>) => {
      try {
        return await run();
      } catch (error) {
        if (shown(error)) return uploadPage(request, reply, error);
        throw error;
      }
    };

    // A body that is not multipart never reaches the route: answer with the form and what to do.
    app.setErrorHandler(async (error: FastifyError, request, reply) => {
      if (request.method === 'POST' && error.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE')
        return uploadPage(request, reply, uploadError(error));
      throw error;
    });

    app.get(`${base}/export.csv`, async (request, reply) => {
      // The index's query (search, filters, date ranges, sort) as list parameters: the export is the current view,
      // every page of it.
      const query = listQueryOf(request.query as Query);
      // With a byte order mark: this download is usually opened in a spreadsheet, which needs it to read UTF-8.
      const stream = await exportCsv(contextOf(database, request), resource, query, { bom: true });
      return reply
        .type('text/csv; charset=utf-8')
        .header('Content-Disposition', `attachment; filename="${exportFilename(resource)}"`)
        .header('Cache-Control', 'private, no-store')
        .send(stream);
    });

    app.get(`${base}/import`, async (request, reply) => {
      authorize(contextOf(database, request), resource, 'import');
      return uploadPage(request, reply);
    });

    app.post(`${base}/import`, async (request, reply) => {
      const ctx = contextOf(database, request);
      return step(request, reply, async () => {
        let id: bigint;
        try {
          // Who may import is settled before a byte of the file is read.
          authorize(ctx, resource, 'import');
          const upload = await uploadedCsv(request, (part) => checkCsrf(app, request, reply, part));
          id = await stageUpload(ctx, resource, upload.filename, await bytesOf(upload.file));
        } catch (error) {
          throw uploadError(error) ?? error;
        }
        const next = `${base}/import/${id}`;
        // htmx posted the file (to show its progress): it follows HX-Redirect as a browser follows a 303.
        if (request.headers['hx-request']) return reply.header('HX-Redirect', next).code(200).send('');
        return redirectWith(reply, next);
      });
    });

    app.get(`${base}/import/:id`, async (request: WithId, reply) => {
      const ctx = contextOf(database, request);
      return step(request, reply, async () => {
        const { filename, inspection } = await inspected(ctx, request.params.id);
        const choices = choicesOf(request.query, inspection.columns.length);
        return sendPage(
          reply,
          <MatchStep
            ctx={pageContext(request, reply)}
            resource={resource}
            id={request.params.id}
            filename={filename}
            inspection={inspection}
            choices={choices}
          />,
        );
      });
    });

    app.post(`${base}/import/:id/preview`, csrf, async (request: WithId, reply) => {
      const ctx = contextOf(database, request);
      const { id } = request.params;
      return step(request, reply, async () => {
        const { filename, inspection } = await inspected(ctx, id);
        const choices = choicesOf(request.body, inspection.columns.length);
        const page = pageContext(request, reply);
        try {
          const options = optionsOf(
            resource,
            inspection.columns.map((c) => c.header),
            choices,
          );
          const report = await importStaged(ctx, resource, id, { ...options, dryRun: true });
          return sendPage(
            reply,
            <PreviewStep ctx={page} resource={resource} id={id} report={report} choices={choices} />,
          );
        } catch (error) {
          // A mapping that cannot stand (two columns for one field, no column to match by): back to the matching.
          if (!shown(error) || error.status !== 422) throw error;
          const match = { resource, id, filename, inspection, choices };
          return sendPage(reply, <MatchStep ctx={page} {...match} problem={error} />, error.status);
        }
      });
    });

    app.post(`${base}/import/:id/run`, csrf, async (request: WithId, reply) => {
      const ctx = contextOf(database, request);
      const { id } = request.params;
      return step(request, reply, async () => {
        const { inspection } = await inspected(ctx, id);
        const choices = choicesOf(request.body, inspection.columns.length);
        const options = optionsOf(
          resource,
          inspection.columns.map((c) => c.header),
          choices,
        );
        // In the background: the Imports page follows it. Whatever stops it is kept on the import (its status and
        // error) by the engine, and logged here.
        importStaged(ctx, resource, id, options).catch((error: unknown) => {
          const level = error instanceof AppError && error.status < 500 ? 'warn' : 'error';
          request.log[level]({ err: error, import: id }, 'import failed');
        });
        return redirectWith(reply, `/imports/${id}`);
      });
    });
  };
}
