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
import { AppError, validationFailed } from '../../errors.ts';
import { exportCsv, exportFilename } from '../../records/csv.ts';
import { importFields, readMapping } from '../../records/import-columns.ts';
import {
  IMPORT_MAX_BYTES,
  type ImportReport,
  type Inspection,
  inspectCsv,
  upsertFields,
} from '../../records/import.ts';
import { importStaged, problemsOf, slices, stagedUpload, stageUpload } from '../../records/imports.ts';
import { authorize, type Context } from '../../records/operations.ts';
import type { Field, Resource } from '../../schema/resource.ts';
import { IMPORT_MULTIPART, uploadedCsv, uploadError } from '../csv-upload.ts';
import { contextOf } from '../context.ts';
import { checkCsrf, pageContext, redirectWith } from './context.ts';
import { listQueryOf } from './record-pages.tsx';
import { sendPage } from './render.tsx';
import { CsrfInput } from './views/form.tsx';
import { delimiterName, encodingName, FailedRows, ImportCounts, ImportProblem, plural } from './views/imports.tsx';
import { Layout, type PageContext } from './views/layout.tsx';
import type { Query } from './views/records.tsx';

/** Problems an import page shows next to its form; anything else is the app's error page. */
const SHOWN = new Set([400, 409, 413, 415, 422]);
const shown = (error: unknown): error is AppError => error instanceof AppError && SHOWN.has(error.status);

const STEPS = ['Upload the file', 'Match the columns', 'Preview', 'Import'];

function WizardSteps({ step }: { step: number }) {
  return (
    <ol class="wizard-steps" aria-label="Import steps">
      {STEPS.map((label, i) => (
        <li aria-current={i === step ? 'step' : undefined}>{label}</li>
      ))}
    </ol>
  );
}

/** A wizard page: its title, where it is in the steps, the problem of the last try, then the step's own content. */
function WizardPage(props: {
  ctx: PageContext;
  resource: Resource;
  step: number;
  problem?: AppError;
  children: preact.ComponentChildren;
}) {
  const { ctx, resource, step, problem } = props;
  return (
    <Layout ctx={ctx} title={`Import ${resource.name}`}>
      <div class="toolbar">
        <h1>Import {resource.name}</h1>
        <div class="actions">
          <a class="button button-secondary" href={`/${resource.name}`}>
            Back to {resource.name}
          </a>
        </div>
      </div>
      <WizardSteps step={step} />
      {problem ? <ImportProblem problem={problem} /> : null}
      {props.children}
    </Layout>
  );
}

const codeList = (fields: Field[]) =>
  fields.map((f, i) => (
    <>
      {i ? ', ' : ''}
      <code>{f.name}</code>
    </>
  ));

function UploadStep({ ctx, resource, problem }: { ctx: PageContext; resource: Resource; problem?: AppError }) {
  const { writable, readOnly } = importFields(resource);
  const required = writable.filter((f) => f.required && f.default === undefined);
  const action = `/${resource.name}/import`;
  return (
    <WizardPage ctx={ctx} resource={resource} step={0} problem={problem}>
      <div class="card">
        <p>
          Choose a CSV file of at most {IMPORT_MAX_BYTES / 1024 / 1024} MiB, as a spreadsheet saves it: separated by
          commas, semicolons or tabs, in UTF-8, UTF-16 or Windows-1252 (Excel’s “CSV” and “Unicode Text” both do). Its
          first row names the columns. Columns named like these fields (or their labels) are matched for you; you match
          the others, or leave them out, in the next step:
        </p>
        <pre class="csv-header">
          <code>{writable.map((f) => f.name).join(',')}</code>
        </pre>
        {required.length ? <p>Every row needs {codeList(required)}.</p> : null}
        {readOnly.length ? (
          <p>
            The columns {codeList(readOnly)} are kept by Leadbook and not imported, so a file exported here can be
            imported again.
          </p>
        ) : null}
        <p class="field-hint">
          An empty cell means “not set”; yes/no fields take <code>true</code> or <code>false</code>; dates are written
          like <code>2026-11-22</code>. You see what the import would do before anything is written.
        </p>
        <form
          method="post"
          action={action}
          enctype="multipart/form-data"
          hx-post={action}
          hx-encoding="multipart/form-data"
          hx-target="main"
          hx-select="main"
          hx-swap="outerHTML"
          data-progress="import-progress"
        >
          {/* Before the file: the server checks the token once it reaches the file, before reading it. */}
          <CsrfInput token={ctx.csrf} />
          <div class="field">
            <label for="import-file">CSV file</label>
            <input
              id="import-file"
              type="file"
              name="file"
              accept=".csv,.tsv,.txt,text/csv"
              required
              aria-invalid={problem ? 'true' : undefined}
            />
          </div>
          <progress id="import-progress" hidden value={0} max={100} aria-label="Upload progress"></progress>
          <div class="actions">
            <button type="submit">Upload and match columns</button>
          </div>
        </form>
      </div>
    </WizardPage>
  );
}

/** What the user chose in the matching step: each column's field ("" leaves it out), and the field to match by. */
interface Choices {
  /** By column; undefined where the form said nothing (the engine's own matching then). */
  picked: (string | undefined)[];
  upsertBy: string;
}

const columnName = (i: number) => `column_${i}`;

function choicesOf(source: unknown, columns: number): Choices {
  const values = (source ?? {}) as Record<string, unknown>;
  const text = (name: string) => (typeof values[name] === 'string' ? (values[name] as string) : undefined);
  return {
    picked: Array.from({ length: columns }, (_, i) => text(columnName(i))),
    upsertBy: text('upsert_by') ?? '',
  };
}

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
  if (upsertBy && !upsertFields(resource).some((f) => f.name === upsertBy))
    throw validationFailed({ upsert_by: [`must be one of ${upsertFields(resource).map((f) => f.name)}`] });
  return { mapping, upsertBy };
}

/** The choices again, as hidden fields: the preview's forms carry them to the import and back to the matching. */
function ChoiceFields({ choices }: { choices: Choices }) {
  return (
    <>
      {choices.picked.map((field, i) =>
        field === undefined ? null : <input type="hidden" name={columnName(i)} value={field} />,
      )}
      <input type="hidden" name="upsert_by" value={choices.upsertBy} />
    </>
  );
}

const fieldOption = (f: Field) => `${f.label} (${f.name})`;

function ColumnRow(props: { resource: Resource; inspection: Inspection; index: number; picked: string | undefined }) {
  const { resource, inspection, index } = props;
  const column = inspection.columns[index]!;
  const { writable, readOnly } = importFields(resource);
  const selected = props.picked ?? column.field ?? '';
  // A column the engine matched to a read-only field (an export's id) keeps that choice: it is what matches records.
  const kept = readOnly.find((f) => f.name === column.field);
  const id = `column-${index}`;
  return (
    <tr>
      <th scope="row">
        <label for={id}>{column.header || `Column ${index + 1}`}</label>
      </th>
      <td class="samples">
        <ul>
          {inspection.samples.map((row) => (
            <li>{row[index]?.trim() ? row[index] : <span class="muted">(empty)</span>}</li>
          ))}
        </ul>
      </td>
      <td class="mapping-choice">
        <select id={id} name={columnName(index)}>
          <option value="" selected={selected === ''}>
            Don’t import this column
          </option>
          {kept ? (
            <option value={kept.name} selected={selected === kept.name}>
              {fieldOption(kept)}, to match records
            </option>
          ) : null}
          {writable.map((f) => (
            <option value={f.name} selected={selected === f.name}>
              {fieldOption(f)}
            </option>
          ))}
        </select>
      </td>
    </tr>
  );
}

function MatchStep(props: {
  ctx: PageContext;
  resource: Resource;
  id: string;
  filename: string;
  inspection: Inspection;
  choices: Choices;
  problem?: AppError;
}) {
  const { ctx, resource, id, inspection, choices } = props;
  const by: [string, string][] = [
    ['', 'Nothing: create a record for every row'],
    ...upsertFields(resource).map((f): [string, string] => [f.name, fieldOption(f)]),
  ];
  return (
    <WizardPage ctx={ctx} resource={resource} step={1} problem={props.problem}>
      <form method="post" action={`/${resource.name}/import/${id}/preview`} class="card">
        <h2>Match the columns of {props.filename}</h2>
        <CsrfInput token={ctx.csrf} />
        <p>
          Read as <strong>{encodingName(inspection.encoding)}</strong>, separated by{' '}
          <strong>{delimiterName(inspection.delimiter)}</strong>:{' '}
          {plural(inspection.columns.length, 'column', 'columns')}. Choose the field each column fills, or leave it out.
        </p>
        <div class="table-wrap mapping">
          <table>
            <caption class="visually-hidden">The file’s columns and the fields they fill</caption>
            <thead>
              <tr>
                <th scope="col">Column</th>
                <th scope="col">First values</th>
                <th scope="col">Import into</th>
              </tr>
            </thead>
            <tbody>
              {inspection.columns.map((_, i) => (
                <ColumnRow resource={resource} inspection={inspection} index={i} picked={choices.picked[i]} />
              ))}
            </tbody>
          </table>
        </div>
        <fieldset class="spaced">
          <legend>Match existing {resource.name} by</legend>
          <div class="ticks">
            {by.map(([name, label]) => (
              <label>
                <input type="radio" name="upsert_by" value={name} checked={choices.upsertBy === name} />
                {label}
              </label>
            ))}
          </div>
          <p class="field-hint">
            A row that matches a {resource.singular} updates it with the row’s values instead of creating another one.
          </p>
        </fieldset>
        <div class="actions">
          <button type="submit">Preview the import</button>
          <a class="button button-secondary" href={`/${resource.name}/import`}>
            Choose another file
          </a>
        </div>
      </form>
    </WizardPage>
  );
}

function PreviewStep(props: {
  ctx: PageContext;
  resource: Resource;
  id: string;
  report: ImportReport;
  choices: Choices;
}) {
  const { ctx, resource, id, report, choices } = props;
  const failures = report.failed.length + (report.failed_truncated ?? 0);
  const rows = report.created + report.updated;
  const base = `/${resource.name}/import/${id}`;
  const left = report.columns.filter((c) => !c.field).map((c) => c.header || '(no name)');
  return (
    <WizardPage ctx={ctx} resource={resource} step={2}>
      <div class={`flash ${failures ? 'flash-info' : 'flash-success'}`} role="status">
        <p>
          Nothing is written yet. The import would create {plural(report.created, resource.singular, resource.name)},
          update {report.updated}, leave {report.unchanged} unchanged, and{' '}
          {failures ? `skip ${plural(failures, 'row', 'rows')} that would fail.` : 'no row would fail.'}
        </p>
      </div>
      <ImportCounts counts={{ ...report, failed: failures }} dryRun />
      {left.length ? <p>Left out: {left.join(', ')}.</p> : null}
      {report.failed.length ? (
        <>
          <h2>Rows that would fail</h2>
          <FailedRows
            caption="Rows that would not be imported, with the reasons"
            headers={report.columns.map((c) => c.header)}
            rows={report.failed.map((f) => ({ row: f.row, cells: f.cells, problems: problemsOf(f.errors) }))}
          />
          <p class="field-hint">
            Row 1 is the first row under the header.{' '}
            {report.failed_truncated ? `${plural(report.failed_truncated, 'more row', 'more rows')} would fail. ` : ''}
            After the import you can download them all to correct and import again.
          </p>
        </>
      ) : null}
      <div class="actions spaced">
        {rows ? (
          <form method="post" action={`${base}/run`} class="inline">
            <CsrfInput token={ctx.csrf} />
            <ChoiceFields choices={choices} />
            <button type="submit">Import {plural(rows, 'row', 'rows')}</button>
          </form>
        ) : null}
        {/* Back by GET, without the token: the choices come back in the address, which the matching step reads. */}
        <form method="get" action={base} class="inline">
          <ChoiceFields choices={choices} />
          <button type="submit" class={rows ? 'button-secondary' : undefined}>
            Back to matching
          </button>
        </form>
      </div>
    </WizardPage>
  );
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
