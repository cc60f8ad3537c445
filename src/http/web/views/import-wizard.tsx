// The import wizard's steps as pages (csv-pages.tsx serves them): upload a file, match its columns to fields,
// preview what a dry run says. What the user chose travels as form fields (`column_<i>`, `upsert_by`).
import type { AppError } from '../../../errors.ts';
import { importFields } from '../../../records/import-columns.ts';
import { IMPORT_MAX_BYTES, type ImportReport, type Inspection, upsertFields } from '../../../records/import.ts';
import { problemsOf } from '../../../records/imports.ts';
import type { Field, Resource } from '../../../schema/resource.ts';
import { CsrfInput } from './form.tsx';
import { delimiterName, encodingName, FailedRows, ImportCounts, ImportProblem, plural } from './imports.tsx';
import { Layout, type PageContext } from './layout.tsx';

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

export function UploadStep({ ctx, resource, problem }: { ctx: PageContext; resource: Resource; problem?: AppError }) {
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
export interface Choices {
  /** By column; undefined where the form said nothing (the engine's own matching then). */
  picked: (string | undefined)[];
  upsertBy: string;
}

export const columnName = (i: number) => `column_${i}`;

export function choicesOf(source: unknown, columns: number): Choices {
  const values = (source ?? {}) as Record<string, unknown>;
  const text = (name: string) => (typeof values[name] === 'string' ? (values[name] as string) : undefined);
  return {
    picked: Array.from({ length: columns }, (_, i) => text(columnName(i))),
    upsertBy: text('upsert_by') ?? '',
  };
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

export function MatchStep(props: {
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

export function PreviewStep(props: {
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
