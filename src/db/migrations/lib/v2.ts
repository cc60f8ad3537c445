// Version 2 of the helpers that generated migrations call. FROZEN, as v1.ts is: a migration written against v2 must
// do the same thing forever. v2 is v1 and indexes over several columns, which a resource declares by name
// (ResourceDecl.indexes): a table's spec lists them, and two steps make and drop one. It imports nothing of the app.
import type { Kysely } from 'kysely';
import * as v1 from './v1.ts';

export type { Column, Dialect, OnDelete } from './v1.ts';

export interface Table extends v1.Table {
  /** Indexes over several columns, by name: the index is `<table>_<name>`, on the columns in order. */
  indexes: Readonly<Record<string, readonly string[]>>;
}

type WithTable<S> = S extends { spec: v1.Table } ? Omit<S, 'spec'> & { spec: Table } : S;

export type Step =
  | WithTable<v1.Step>
  | { op: 'createIndexOn'; table: string; name: string; columns: readonly string[] }
  | { op: 'dropIndexOn'; table: string; name: string };

const createIndexOn = (run: v1.Run, table: string, name: string, columns: readonly string[]) =>
  run(`create index if not exists ${table}_${name} on ${table} (${columns.join(', ')})`);

async function applyStep(run: v1.Run, dialect: v1.Dialect, step: Step) {
  switch (step.op) {
    case 'createIndexOn':
      return createIndexOn(run, step.table, step.name, step.columns);
    case 'dropIndexOn':
      return run(`drop index if exists ${step.table}_${step.name}`);
    default:
      await v1.applyStep(run, dialect, step as v1.Step);
      // A new table, or a SQLite table rebuilt to change a column, gets its indexes over several columns too.
      if (step.op === 'createTable' || (step.op === 'alterColumns' && dialect === 'sqlite'))
        for (const [name, columns] of Object.entries(step.spec.indexes ?? {}))
          await createIndexOn(run, step.table, name, columns);
  }
}

export async function apply(db: Kysely<any>, steps: readonly Step[]): Promise<void> {
  return v1.applyEach(db, steps, applyStep);
}
