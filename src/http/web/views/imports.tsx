// What the import wizard's steps and the Imports page share: a problem shown next to a form, how a file was read,
// the counts of an import (or of its dry run), and the table of the rows that failed with their reasons.
import type { AppError } from '../../../errors.ts';

/** A count as people read it: 150,000. */
export const count = (n: number) => n.toLocaleString('en-US');
export const plural = (n: number, one: string, many: string) => `${count(n)} ${n === 1 ? one : many}`;

const ENCODINGS: Record<string, string> = {
  'utf-8': 'UTF-8',
  'utf-16le': 'UTF-16 (little-endian)',
  'utf-16be': 'UTF-16 (big-endian)',
  'windows-1252': 'Windows-1252 (Western European)',
};
const DELIMITERS: Record<string, string> = { ',': 'comma (,)', ';': 'semicolon (;)', '\t': 'tab' };

export const encodingName = (encoding: string | null) => (encoding ? (ENCODINGS[encoding] ?? encoding) : '—');
export const delimiterName = (delimiter: string | null) => (delimiter ? (DELIMITERS[delimiter] ?? delimiter) : '—');

export function ImportProblem({ problem }: { problem: AppError }) {
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

export interface Counts {
  created: number;
  updated: number;
  unchanged: number;
  failed: number;
}

/** The four counts as stat cards; a dry run says what would happen. */
export function ImportCounts({ counts, dryRun }: { counts: Counts; dryRun?: boolean }) {
  const would = dryRun ? 'Would be ' : '';
  const items: [number, string][] = [
    [counts.created, `${would}created`],
    [counts.updated, `${would}updated`],
    [counts.unchanged, 'Unchanged'],
    [counts.failed, dryRun ? 'Would fail' : 'Failed'],
  ];
  return (
    <ul class="grid import-counts">
      {items.map(([n, label]) => (
        <li class="card">
          <p class="stat">{count(n)}</p>
          <p class="stat-label">{label.charAt(0).toUpperCase() + label.slice(1)}</p>
        </li>
      ))}
    </ul>
  );
}

/** A failed row: its number when known, its cells as read, and what was wrong, one line per problem. */
export interface FailedRow {
  row?: number;
  cells: string[];
  problems: string[];
}

/** The failed rows with the file's own columns, scrolling sideways in their box when the file is wide. */
export function FailedRows({ headers, rows, caption }: { headers: string[]; rows: FailedRow[]; caption: string }) {
  if (rows.length === 0) return null;
  const numbered = rows.some((r) => r.row !== undefined);
  return (
    // A wide file scrolls sideways in its box, which the keyboard reaches too.
    <section class="table-wrap failed-rows" tabindex={0} aria-label={caption}>
      <table>
        <caption class="visually-hidden">{caption}</caption>
        <thead>
          <tr>
            {numbered ? <th scope="col">Row</th> : null}
            <th scope="col">Problems</th>
            {headers.map((h, i) => (
              <th scope="col">{h || `Column ${i + 1}`}</th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.map((r) => (
            <tr>
              {numbered ? <td>{r.row}</td> : null}
              <td class="cell-text">
                <ul class="import-errors">
                  {r.problems.map((p) => (
                    <li>{p}</li>
                  ))}
                </ul>
              </td>
              {headers.map((_, i) => (
                <td>{r.cells[i] ?? ''}</td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}
