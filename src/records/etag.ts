import { createHash } from 'node:crypto';
import type { Row } from './repository.ts';

/** A strong validator of the whole representation: any change of any field changes it. */
export function etagOf(record: Row): string {
  const canonical = JSON.stringify(record, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v));
  return `"${createHash('sha256').update(canonical).digest('base64url').slice(0, 27)}"`;
}

/** RFC 9110 If-Match: `*` or a list of strong tags; weak tags never match. */
export function ifMatchHolds(header: string, current: string | null): boolean {
  if (current === null) return false;
  if (header.trim() === '*') return true;
  return header
    .split(',')
    .map((t) => t.trim())
    .includes(current);
}
