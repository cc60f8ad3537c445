// How fast the team answers (issue 14, "Response clocks"): per assignee, the median time from an inquiry's arrival to
// its first response, over the inquiries first answered in the last 7 and 30 days.
import type { Executor } from '../db/tables.ts';

export interface ResponseTimes {
  userId: string;
  name: string;
  /** Median minutes, by window (days); null when none was answered in it. */
  median: Record<number, number | null>;
  /** How many were answered in the longest window. */
  answered: number;
}

export const WINDOWS = [7, 30] as const;
const DAY_MS = 24 * 60 * 60 * 1000;
/** Most inquiries read for it (the newest answered first): a month of a busy desk. */
const MOST = 50_000;

function median(values: number[]): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

export async function responseTimes(db: Executor, now = Date.now()): Promise<ResponseTimes[]> {
  const longest = Math.max(...WINDOWS);
  const rows = await db
    .selectFrom('inquiries')
    .innerJoin('users', 'users.id', 'inquiries.assigned_to')
    .select([
      'inquiries.assigned_to as user_id',
      'users.name as name',
      'inquiries.created_at',
      'inquiries.first_response_at',
    ])
    .where('inquiries.first_response_at', '>=', new Date(now - longest * DAY_MS).toISOString())
    .orderBy('inquiries.first_response_at', 'desc')
    .limit(MOST)
    .execute();
  const byUser = new Map<string, { name: string; answers: { at: number; minutes: number }[] }>();
  for (const row of rows) {
    const at = new Date(row.first_response_at!).getTime();
    const minutes = Math.max(0, (at - new Date(row.created_at!).getTime()) / 60_000);
    const key = String(row.user_id);
    const entry = byUser.get(key) ?? { name: row.name, answers: [] };
    entry.answers.push({ at, minutes });
    byUser.set(key, entry);
  }
  return [...byUser]
    .map(([userId, { name, answers }]) => ({
      userId,
      name,
      median: Object.fromEntries(
        WINDOWS.map((days) => [days, median(answers.filter((a) => a.at >= now - days * DAY_MS).map((a) => a.minutes))]),
      ),
      answered: answers.length,
    }))
    .sort((a, b) => a.name.localeCompare(b.name));
}

/** Minutes as a person reads them: 12 min, 3.5 h, 2.1 d. */
export function spoken(minutes: number | null): string {
  if (minutes === null) return '—';
  if (minutes < 60) return `${Math.round(minutes)} min`;
  if (minutes < 48 * 60) return `${(minutes / 60).toFixed(1)} h`;
  return `${(minutes / 1440).toFixed(1)} d`;
}
