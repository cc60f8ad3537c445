// Valid records of any declared resource, derived from its declaration: each
// field's kind gives the n-th sample value, a reference names a record the
// caller has. A resource declared tomorrow gets records here without edits.
import type { Resource } from '../../src/schema/resource.ts';

/** The id of a record of `target` that a new record may reference, or undefined to leave the reference out. */
export type Pick = (target: Resource) => unknown;

/** A whole record's worth of valid input; every text field carries `tag`, a fifth of the optional fields are null. */
export function sampleInput(resource: Resource, n: number, tag: string, pick: Pick): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  for (const [i, field] of resource.writable.entries()) {
    const target = field.target ?? field.listTarget;
    if (target) {
      // A list of ids (`listOf`) names one record.
      const id = pick(target);
      if (id !== undefined) body[field.name] = field.target ? id : [id];
      else if (!field.target && field.required) body[field.name] = [];
    } else if (field.nullable && field !== resource.title && (n + i) % 5 === 4) {
      // A fifth of the optional fields, a different fifth for each n: two samples never agree on every field.
      body[field.name] = null;
    } else {
      body[field.name] = field.kind.sample(field, n, tag);
    }
  }
  return body;
}

/**
 * The record resources in an order where every reference names a resource that comes earlier (so that a record of
 * each, made in this order, can name one of every resource it references); where optional references go round, one
 * of them names a later resource. Required references that go round are a declaration error.
 */
export function inDependencyOrder(resources: readonly Resource[]): Resource[] {
  const ordered: Resource[] = [];
  /** `path`: the resources being visited, each with whether its reference to the next one is required. */
  const visit = (resource: Resource, path: { resource: Resource; required: boolean }[]) => {
    if (ordered.includes(resource) || !resources.includes(resource)) return;
    const at = path.findIndex((p) => p.resource === resource);
    if (at >= 0) {
      const round = path.slice(at);
      if (round.every((p) => p.required))
        throw new Error(
          `required references go round: ${[...round, { resource }].map((p) => p.resource.name).join(' → ')}`,
        );
      return;
    }
    for (const field of resource.writable) {
      const target = field.target ?? field.listTarget;
      if (target && target !== resource) visit(target, [...path, { resource, required: field.required }]);
    }
    ordered.push(resource);
  };
  for (const resource of resources) visit(resource, []);
  return ordered;
}

type Post = (
  path: string,
  body: Record<string, unknown>,
) => Promise<{ status: number; text: string; body: { data: { id: unknown } } }>;

/** Samplers made so far in this process: each tags the records it makes its own way (a name may be unique). */
let samplers = 0;

/**
 * Valid input for any resource over HTTP: the records its references name are created first (once each, through
 * `post`), except the `given` ones (the admin for users).
 */
export function sampler(post: Post, given: ReadonlyMap<Resource, unknown>) {
  const made = new Map(given);
  const tag = `target${++samplers}`;
  async function existing(target: Resource): Promise<unknown> {
    if (!made.has(target)) {
      const created = await post(`/api/v1/${target.name}`, await input(target, 1, tag));
      if (created.status !== 201)
        throw new Error(`a ${target.singular} to reference: ${created.status} ${created.text}`);
      made.set(target, created.body.data.id);
    }
    return made.get(target);
  }
  async function input(resource: Resource, n: number, tag: string): Promise<Record<string, unknown>> {
    for (const field of resource.writable) {
      const target = field.target ?? field.listTarget;
      if (target) await existing(target);
    }
    return sampleInput(resource, n, tag, (target) => made.get(target));
  }
  return { input };
}
