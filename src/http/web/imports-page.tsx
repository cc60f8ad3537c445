// The Imports page: every import of the records the viewer may import, newest first; and one import: while it
// runs, a progress bar that asks for itself again every second (htmx) until it is done; then its report, the rows
// that failed (to download as CSV, corrected and imported again), and rolling it back. Thin: src/records/imports.ts
// does the work.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Database } from '../../db/connection.ts';
import { AppError } from '../../errors.ts';
import {
  failedRows,
  failedRowsCsv,
  getImport,
  type ImportSummary,
  listImports,
  problemsOf,
  rollbackImport,
} from '../../records/imports.ts';
import type { Context } from '../../records/operations.ts';
import { recordResources } from '../../resources/index.ts';
import { kinds } from '../../schema/kinds.ts';
import { allows } from '../../schema/roles.ts';
import type { Resource } from '../../schema/resource.ts';
import { contextOf } from '../context.ts';
import { pageContext, redirectWith } from './context.ts';
import { sendFragment, sendPage } from './render.tsx';
import { CsrfInput } from './views/form.tsx';
import {
  delimiterName,
  encodingName,
  type FailedRow,
  FailedRows,
  ImportCounts,
  count,
  ImportProblem,
  plural,
} from './views/imports.tsx';
import { Layout, type PageContext } from './views/layout.tsx';

/** Failed rows listed on the page; all of them are in the download. */
const LISTED_FAILURES = 100;

const STATUS: Record<string, string> = {
  uploaded: 'Starting',
  running: 'Running',
  done: 'Done',
  failed: 'Stopped by a problem in the file',
  stopped: 'Stopped: its process ended',
  rolled_back: 'Rolled back',
};
const running = (s: ImportSummary) => s.status === 'running' || s.status === 'uploaded';
/** A resource's records, as the navigation names them ("Contacts"). */
const labelOf = (name: string) => name.charAt(0).toUpperCase() + name.slice(1);

function When({ at, locale }: { at: string | null; locale: string }) {
  return at ? <time datetime={at}>{kinds.dateTime.display(at, locale).text}</time> : <>—</>;
}

function size(bytes: number | null): string {
  if (bytes === null) return '—';
  if (bytes < 1024) return plural(bytes, 'byte', 'bytes');
  return bytes < 1024 * 1024 ? `${(bytes / 1024).toFixed(1)} KiB` : `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}

const titleOf = (s: ImportSummary) => s.filename ?? `Import #${s.id}`;

function ImportsList({ ctx, imports, next }: { ctx: PageContext; imports: ImportSummary[]; next: string | null }) {
  return (
    <Layout ctx={ctx} title="Imports">
      <h1>Imports</h1>
      <p class="muted">
        Every import of the records you may import, newest first: what came of it, the rows that failed, and rolling it
        back. Start one from a list’s Import button.
      </p>
      {imports.length === 0 ? (
        <p class="card">No imports yet.</p>
      ) : (
        <div class="table-wrap">
          <table>
            <thead>
              <tr>
                <th scope="col">File</th>
                <th scope="col">Started</th>
                <th scope="col">By</th>
                <th scope="col">Records</th>
                <th scope="col">Status</th>
                <th scope="col">Created</th>
                <th scope="col">Updated</th>
                <th scope="col">Failed</th>
              </tr>
            </thead>
            <tbody>
              {imports.map((s) => (
                <tr>
                  <td class="cell-text">
                    <a href={`/imports/${s.id}`}>{titleOf(s)}</a>
                  </td>
                  <td class="cell-short">
                    <When at={s.started_at} locale={ctx.locale} />
                  </td>
                  <td>{s.by?.name ?? '—'}</td>
                  <td>{labelOf(s.resource)}</td>
                  <td>{STATUS[s.status] ?? s.status}</td>
                  <td>{count(s.created)}</td>
                  <td>{count(s.updated)}</td>
                  <td>{count(s.failed)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {next ? (
        <p>
          <a href={`/imports?cursor=${encodeURIComponent(next)}`}>Older imports</a>
        </p>
      ) : null}
    </Layout>
  );
}

function Progress({ summary }: { summary: ImportSummary }) {
  const total = summary.size ?? 0;
  return (
    <div class="card">
      <label for="import-run-progress">{summary.status === 'uploaded' ? 'Starting…' : 'Importing…'}</label>
      <progress id="import-run-progress" value={Math.min(summary.bytes_read, total)} max={total || 1}></progress>
      <p class="field-hint">
        {size(summary.bytes_read)} of {size(summary.size)} read. This page follows the import; you may leave it, the
        import goes on.
      </p>
    </div>
  );
}

function Rollback({ ctx, summary, resource }: { ctx: PageContext; summary: ImportSummary; resource: Resource }) {
  const report = summary.rollback;
  if (report)
    return (
      <section class="card">
        <h2>Rolled back</h2>
        <p>
          {plural(report.removed, `${resource.singular} it created was`, `${resource.name} it created were`)} removed
          and {plural(report.restored, 'record it updated was', 'records it updated were')} put back as they were.
          {report.skipped.length
            ? ` ${plural(report.skipped.length, 'record was', 'records were')} left as they are:`
            : ''}
        </p>
        {report.skipped.length ? (
          <ul>
            {report.skipped.map((s) => (
              <li>
                <a href={`/${s.resource}/${s.id}`}>
                  {recordResources.find((r) => r.name === s.resource)?.label ?? s.resource} #{String(s.id)}
                </a>
                : {s.reason}
              </li>
            ))}
          </ul>
        ) : null}
      </section>
    );
  if (!['done', 'failed', 'stopped'].includes(summary.status) || summary.created + summary.updated === 0) return null;
  if (!ctx.viewer || !allows(ctx.viewer.role, resource.access, 'delete')) return null;
  const records = (n: number) => plural(n, resource.singular, resource.name);
  const undone = [
    summary.created ? `removes the ${records(summary.created)} the import created` : '',
    summary.updated ? `puts back the values the ${records(summary.updated)} it updated had before` : '',
  ].filter(Boolean);
  return (
    <section class="card danger-zone">
      <h2>Roll back this import</h2>
      <p>
        This {undone.join(' and ')}. Records someone changed since, or linked other records to, are left as they are and
        listed. It cannot be undone.
      </p>
      <form method="post" action={`/imports/${summary.id}/rollback`}>
        <CsrfInput token={ctx.csrf} />
        <button type="submit" class="button-danger">
          Roll back this import
        </button>
      </form>
    </section>
  );
}

interface Shown {
  ctx: PageContext;
  summary: ImportSummary;
  resource: Resource;
  failures: FailedRow[];
  problem?: AppError;
}

/** Everything under the title; while the import runs it asks for itself again every second, until it is done. */
function ImportStatus({ ctx, summary, resource, failures, problem }: Shown) {
  const live = running(summary);
  const path = `/imports/${summary.id}`;
  return (
    <div
      id="import-status"
      hx-get={live ? `${path}/progress` : undefined}
      hx-trigger={live ? 'every 1s' : undefined}
      hx-swap={live ? 'outerHTML' : undefined}
    >
      {problem ? <ImportProblem problem={problem} /> : null}
      <dl class="record card">
        <dt>Status</dt>
        <dd>{STATUS[summary.status] ?? summary.status}</dd>
        <dt>Records</dt>
        <dd>
          <a href={`/${resource.name}`}>{labelOf(resource.name)}</a>
        </dd>
        <dt>Started</dt>
        <dd>
          <When at={summary.started_at} locale={ctx.locale} /> by {summary.by?.name ?? '—'}
        </dd>
        <dt>Finished</dt>
        <dd>
          <When at={summary.finished_at} locale={ctx.locale} />
        </dd>
        <dt>File</dt>
        <dd>
          {summary.filename ?? '—'} ({size(summary.size)}), {encodingName(summary.encoding)}, separated by{' '}
          {delimiterName(summary.delimiter)}
        </dd>
        {summary.upsert_by ? (
          <>
            <dt>Matched by</dt>
            <dd>{summary.upsert_by}</dd>
          </>
        ) : null}
      </dl>
      {summary.error ? (
        <p class="flash flash-error" role="alert">
          {summary.error}
        </p>
      ) : null}
      {live ? <Progress summary={summary} /> : null}
      <ImportCounts counts={summary} />
      {failures.length ? (
        <>
          <h2>Rows that failed</h2>
          <FailedRows
            caption="Rows that were not imported, with the reasons"
            headers={summary.columns.map((c) => c.header)}
            rows={failures}
          />
          {summary.failed > failures.length ? (
            <p class="field-hint">Only the first {failures.length} are listed; the download has them all.</p>
          ) : null}
        </>
      ) : null}
      {!live && summary.failed ? (
        <p class="actions spaced">
          <a class="button button-secondary" href={`${path}/failed.csv`} download>
            Download failed rows (CSV)
          </a>
        </p>
      ) : null}
      <Rollback ctx={ctx} summary={summary} resource={resource} />
    </div>
  );
}

/** The first failed rows of a finished import, with their row numbers and problems. */
async function failedRowsOf(ctx: Context, summary: ImportSummary): Promise<FailedRow[]> {
  if (running(summary) || summary.failed === 0) return [];
  const rows = await failedRows(ctx, summary.id, LISTED_FAILURES);
  return rows.map((f) => ({ row: f.row, cells: f.cells, problems: problemsOf(f.errors) }));
}

type ById = FastifyRequest<{ Params: { id: string } }>;

export function importsPage(database: Database) {
  return async function plugin(app: FastifyInstance) {
    /** What the page and its progress fragment show of an import. */
    const shownOf = async (request: ById, reply: FastifyReply, problem?: AppError): Promise<Shown> => {
      const ctx = contextOf(database, request);
      const { summary, resource } = await getImport(ctx, request.params.id);
      const failures = await failedRowsOf(ctx, summary);
      return { ctx: pageContext(request, reply), summary, resource, failures, problem };
    };

    const importPage = async (request: ById, reply: FastifyReply, problem?: AppError) => {
      const shown = await shownOf(request, reply, problem);
      const title = `Import of ${shown.resource.name}: ${titleOf(shown.summary)}`;
      return sendPage(
        reply,
        <Layout ctx={shown.ctx} title={title}>
          <div class="toolbar">
            <h1>{title}</h1>
            <div class="actions">
              <a class="button button-secondary" href="/imports">
                All imports
              </a>
            </div>
          </div>
          <ImportStatus {...shown} />
        </Layout>,
        problem?.status,
      );
    };

    app.get('/imports', async (request: FastifyRequest<{ Querystring: { cursor?: string } }>, reply) => {
      const cursor = typeof request.query.cursor === 'string' ? request.query.cursor : undefined;
      const { data, meta } = await listImports(contextOf(database, request), cursor);
      return sendPage(reply, <ImportsList ctx={pageContext(request, reply)} imports={data} next={meta.next_cursor} />);
    });

    app.get('/imports/:id', (request: ById, reply) => importPage(request, reply));

    app.get('/imports/:id/progress', async (request: ById, reply) =>
      sendFragment(reply, <ImportStatus {...(await shownOf(request, reply))} />),
    );

    app.get('/imports/:id/failed.csv', async (request: ById, reply) => {
      const stream = await failedRowsCsv(contextOf(database, request), request.params.id);
      return reply
        .type('text/csv; charset=utf-8')
        .header('Content-Disposition', `attachment; filename="import-${request.params.id}-failed-rows.csv"`)
        .header('Cache-Control', 'private, no-store')
        .send(stream);
    });

    app.post<{ Params: { id: string } }>(
      '/imports/:id/rollback',
      { preHandler: app.csrfProtection },
      async (request, reply) => {
        try {
          const report = await rollbackImport(contextOf(database, request), request.params.id);
          const { removed, restored, skipped } = report;
          const left = skipped.length ? `, ${count(skipped.length)} left as they were` : '';
          return redirectWith(reply, `/imports/${request.params.id}`, {
            kind: 'success',
            text: `The import was rolled back: ${count(removed)} removed, ${count(restored)} put back${left}.`,
          });
        } catch (error) {
          if (!(error instanceof AppError) || error.status !== 409) throw error;
          return importPage(request, reply, error);
        }
      },
    );
  };
}
