// An inquiry beside its contact: the fields they share whose values differ, with a form that copies the chosen
// ones either way (records/operations.ts does the writing, so each copy is a logged update).
import type { Row } from '../../../records/repository.ts';
import type { Choices } from '../../../records/references.ts';
import type { Field, Resource } from '../../../schema/resource.ts';
import { CsrfInput } from './form.tsx';
import { recordTitle, Value } from './records.tsx';

/** The reference to the record a resource extends (an inquiry's contact), if it has one. */
export const linkToBase = (resource: Resource): Field | undefined =>
  resource.base ? resource.fields.find((f) => f.target === resource.base) : undefined;

/** The fields a record shares with the one it extends, as a person edits them (not the creator, not secrets). */
export const sharedFields = (resource: Resource): Field[] =>
  resource.base
    ? resource.base.writable.filter((f) => resource.field(f.name)?.fillable && !f.defaultActor && !f.hidden)
    : [];

const same = (a: unknown, b: unknown) => (a ?? null) === (b ?? null) || String(a ?? '') === String(b ?? '');

/** The shared fields whose values differ between the record and its base record. */
export const differences = (resource: Resource, record: Row, linked: Row) =>
  sharedFields(resource).filter((f) => !same(record[f.name], linked[f.name]));

export function LinkedRecord(props: {
  resource: Resource;
  record: Row;
  linked: Row;
  choices: Choices;
  csrf: string;
  locale: string;
  canCopyTo: boolean;
  canCopyFrom: boolean;
}) {
  const { resource, record, linked, choices, csrf, locale } = props;
  const base = resource.base!;
  const href = `/${base.name}/${String(linked[base.primaryKey.name])}`;
  const differing = differences(resource, record, linked);
  return (
    <section class="card" aria-labelledby="linked-heading">
      <h2 id="linked-heading">
        {base.label}: <a href={href}>{recordTitle(base, linked)}</a>
      </h2>
      {differing.length === 0 ? (
        <p class="muted">
          The {resource.singular} and its {base.singular} agree on every field they share.
        </p>
      ) : (
        <form method="post" action={`/${resource.name}/${String(record.id)}/copy`}>
          <CsrfInput token={csrf} />
          <div class="table-wrap">
            <table>
              <caption>Fields that differ: choose which to copy</caption>
              <thead>
                <tr>
                  <th scope="col">Copy</th>
                  <th scope="col">Field</th>
                  <th scope="col">This {resource.singular}</th>
                  <th scope="col">The {base.singular}</th>
                </tr>
              </thead>
              <tbody>
                {differing.map((f) => (
                  <tr>
                    <td>
                      <input
                        type="checkbox"
                        name="fields"
                        value={f.name}
                        id={`copy-${f.name}`}
                        checked
                        aria-label={`Copy ${f.label}`}
                      />
                    </td>
                    <th scope="row">
                      <label for={`copy-${f.name}`}>{f.label}</label>
                    </th>
                    <td>
                      <Value field={f} value={record[f.name]} choices={choices} locale={locale} />
                    </td>
                    <td>
                      <Value field={f} value={linked[f.name]} choices={choices} locale={locale} />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <div class="actions">
            {props.canCopyTo ? (
              <button type="submit" name="direction" value="to_base" class="button-secondary">
                Copy to the {base.singular}
              </button>
            ) : null}
            {props.canCopyFrom ? (
              <button type="submit" name="direction" value="from_base" class="button-secondary">
                Copy from the {base.singular}
              </button>
            ) : null}
          </div>
        </form>
      )}
    </section>
  );
}
