// CSV pages of every records resource: /{resource}/export.csv downloads the
// list as the index shows it (its search, filters and sort), /{resource}/import
// explains the expected columns and takes a file, and answers with a report.
// They call the same CSV core as the JSON API; no SQL here.
import multipart from '@fastify/multipart';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Database } from '../../db/connection.ts';
import { AppError } from '../../errors.ts';
import { exportCsv, exportFilename } from '../../records/csv.ts';
import { importFields } from '../../records/import-columns.ts';
import { IMPORT_MAX_BYTES, type ImportReport, ROW_ERROR } from '../../records/import.ts';
import { authorize } from '../../records/operations.ts';
import type { Resource } from '../../schema/resource.ts';
import { IMPORT_MULTIPART, importUpload, uploadError } from '../csv-upload.ts';
import { contextOf } from '../context.ts';
import { checkCsrf, pageContext } from './context.ts';
import { CsrfInput } from './views/form.tsx';
import { listQueryOf } from './record-pages.tsx';
import { sendPage } from './render.tsx';
import { Layout, type PageContext } from './views/layout.tsx';
import type { Query } from './views/records.tsx';

const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;

/** Problems an import page shows next to its form; anything else is the app's error page. */
const SHOWN = new Set([400, 409, 413, 415, 422]);

function ImportProblem({ problem }: { problem: AppError }) {
  const errors = Object.entries(problem.errors ?? {});
  return (
    <div class="flash flash-error" role="alert">
      <p>{problem.detail}</p>
      {errors.length ? (
        <ul>
          {errors.map(([name, messages]) => (
            <li>
              <code>{name}</code> {messages.join('; ')}
            </li>
          ))}
        </ul>
      ) : null}
    </div>
  );
}

function ImportPage({ ctx, resource, problem }: { ctx: PageContext; resource: Resource; problem?: AppError }) {
  const { writable, readOnly: ignored } = importFields(resource);
  const required = writable.filter((f) => f.required && f.default === undefined);
  const action = `/${resource.name}/import`;
  const invalid = problem ? 'true' : undefined;
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
      {problem ? <ImportProblem problem={problem} /> : null}
      <div class="card">
        <p>
          Choose a CSV file (comma-separated, UTF-8, at most {IMPORT_MAX_BYTES / 1024 / 1024} MiB). Its first row names
          the columns with these field names, in any order; leave out the ones you do not need:
        </p>
        <pre class="csv-header">
          <code>{writable.map((f) => f.name).join(',')}</code>
        </pre>
        {required.length ? (
          <p>
            Every row needs{' '}
            {required.map((f, i) => (
              <>
                {i ? ', ' : ''}
                <code>{f.name}</code>
              </>
            ))}
            .
          </p>
        ) : null}
        {ignored.length ? (
          <p>
            The columns{' '}
            {ignored.map((f, i) => (
              <>
                {i ? ', ' : ''}
                <code>{f.name}</code>
              </>
            ))}{' '}
            are kept by Leadbook and ignored, so a file exported here can be imported again.
          </p>
        ) : null}
        <p class="field-hint">
          An empty cell means “not set”; yes/no fields take <code>true</code> or <code>false</code>; dates are written
          like <code>2026-11-22</code>. Good rows are imported; rows with problems are skipped and listed afterwards, so
          you can fix and import just those.
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
            <input id="import-file" type="file" name="file" accept=".csv,text/csv" required aria-invalid={invalid} />
          </div>
          <progress id="import-progress" hidden value={0} max={100} aria-label="Upload progress"></progress>
          <div class="actions">
            <button type="submit">Import</button>
          </div>
        </form>
      </div>
    </Layout>
  );
}

function ReportPage({ ctx, resource, report }: { ctx: PageContext; resource: Resource; report: ImportReport }) {
  const failures = report.failed.length + (report.failed_truncated ?? 0);
  const base = `/${resource.name}`;
  return (
    <Layout ctx={ctx} title={`Import of ${resource.name}`}>
      <h1>Import of {resource.name}</h1>
      <div class={`flash ${failures ? 'flash-info' : 'flash-success'}`} role="status">
        <p>
          {plural(report.created, `${resource.singular} was`, `${resource.name} were`)} created.{' '}
          {failures
            ? `${plural(failures, 'row', 'rows')} could not be imported and ${failures === 1 ? 'was' : 'were'} skipped.`
            : 'No rows failed.'}
        </p>
      </div>
      {report.failed.length ? (
        <div class="table-wrap">
          <table>
            <caption class="visually-hidden">Rows that were not imported</caption>
            <thead>
              <tr>
                <th scope="col">Row</th>
                <th scope="col">Line</th>
                <th scope="col">Problems</th>
              </tr>
            </thead>
            <tbody>
              {report.failed.map((failure) => (
                <tr>
                  <td>{failure.row}</td>
                  <td>{failure.line}</td>
                  <td>
                    <ul class="import-errors">
                      {Object.entries(failure.errors).map(([name, messages]) => (
                        <li>
                          {name === ROW_ERROR ? 'The row' : <code>{name}</code>} {messages.join('; ')}
                        </li>
                      ))}
                    </ul>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
      {report.failed.length ? (
        <p class="field-hint">
          Row 1 is the first row under the header; Line is the line of the file where the row starts.
        </p>
      ) : null}
      {report.failed_truncated ? (
        <p>
          {plural(report.failed_truncated, 'more row', 'more rows')} failed; only the first {report.failed.length} are
          listed.
        </p>
      ) : null}
      <div class="actions spaced">
        <a class="button" href={base}>
          Back to {resource.name}
        </a>
        <a class="button button-secondary" href={`${base}/import`}>
          Import another file
        </a>
      </div>
    </Layout>
  );
}

export function csvPages(database: Database, resource: Resource) {
  return async function plugin(app: FastifyInstance) {
    await app.register(multipart, IMPORT_MULTIPART);
    const base = `/${resource.name}`;

    const importPage = (request: FastifyRequest, reply: FastifyReply, problem?: AppError) =>
      // htmx swaps in only 2xx answers: the page with its message goes to htmx as 200, to a plain form post with its
      // 4xx.
      sendPage(
        reply,
        <ImportPage ctx={pageContext(request, reply)} resource={resource} problem={problem} />,
        problem && !request.headers['hx-request'] ? problem.status : 200,
      );

    // A body that is not multipart never reaches the route: answer with the form and what to do.
    app.setErrorHandler(async (error: FastifyError, request, reply) => {
      if (request.method === 'POST' && error.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE')
        return importPage(request, reply, uploadError(error));
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
      return importPage(request, reply);
    });

    app.post(`${base}/import`, async (request, reply) => {
      let report: ImportReport;
      try {
        report = await importUpload(contextOf(database, request), resource, request, (part) =>
          checkCsrf(app, request, reply, part),
        );
      } catch (error) {
        if (error instanceof AppError && SHOWN.has(error.status)) return importPage(request, reply, error);
        throw error;
      }
      return sendPage(reply, <ReportPage ctx={pageContext(request, reply)} resource={resource} report={report} />);
    });
  };
}
