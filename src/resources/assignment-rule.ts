import { defineResource } from '../schema/resource.ts';

/** What a rule may match on: the new inquiry's fields of these names, compared case-insensitively. */
export const MATCH_KEYS = ['country', 'inquiry_country', 'service_id', 'source_id'] as const;
export const STRATEGIES = ['round_robin', 'least_open', 'user'] as const;

/**
 * Who gets a new inquiry that names no assignee (CONTRACT.md, "Assignment, notifications, tasks"): the first active
 * rule by position whose every condition holds gives it to one of its users, in turn (round robin), to the one with
 * the fewest open inquiries (least open), or to the first who can take it (user); users who are deactivated or hold
 * `capacity` open inquiries are skipped. `respond_within_minutes` sets the inquiry's due time. Admins keep them.
 */
export const assignmentRule = defineResource({
  name: 'assignment-rules',
  singular: 'assignment rule',
  label: 'Assignment rule',
  access: 'admin',
  nav: false,
  trash: false,
  listColumns: ['position', 'name', 'match', 'strategy', 'users', 'active'],
  fields: {
    id: { kind: 'bigInteger', primary: true, autoIncrement: true },
    name: { kind: 'string', max: 100, required: true, unique: true, sortable: true },
    position: {
      kind: 'integer',
      required: true,
      sortable: true,
      hint: 'Rules are tried in this order, lowest first; the first that matches assigns.',
    },
    match: {
      kind: 'map',
      label: 'Matches',
      max: 255,
      choices: MATCH_KEYS,
      hint:
        'One condition per line, every one must hold (case-insensitive), e.g. "country: Portugal" or ' +
        '"source_id: 2". Keys: country, inquiry_country, service_id, source_id. None: every inquiry.',
    },
    strategy: {
      kind: 'string',
      max: 20,
      choices: STRATEGIES,
      default: 'round_robin',
      required: true,
      searchable: false,
      hint: 'round_robin: each in turn. least_open: whoever has the fewest open inquiries. user: the first who can.',
    },
    users: {
      kind: 'list',
      listOf: 'users',
      required: true,
      label: 'Team members',
      hint: 'Who this rule gives inquiries to.',
    },
    capacity: {
      kind: 'integer',
      min: 1,
      hint: 'The most open inquiries one member may hold; a member at capacity is skipped. Empty: no limit.',
    },
    respond_within_minutes: {
      kind: 'integer',
      min: 1,
      label: 'Respond within (minutes)',
      hint: 'Sets the inquiry’s “respond by” time; past it with no response, it is overdue.',
    },
    active: { kind: 'boolean', default: true, nullable: false },
    created_at: { kind: 'dateTime', timestamp: 'create' },
    updated_at: { kind: 'dateTime', timestamp: 'update' },
  },
});
