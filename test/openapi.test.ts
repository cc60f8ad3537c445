// The OpenAPI document is generated from the same schemas the routes use, and
// an independent validator must accept it.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import SwaggerParser from '@apidevtools/swagger-parser';
import { recordResources } from '../src/resources/index.ts';
import { startApp, type TestApp } from './helpers/app.ts';
import type { Json } from './helpers/json.ts';

describe('OpenAPI document and reference', () => {
  let app: TestApp;
  before(async () => {
    app = await startApp('sqlite');
  });
  after(() => app.close());

  test('is valid OpenAPI 3.1 by @apidevtools/swagger-parser', async () => {
    const reply = await app.get('/api/v1/openapi.json');
    assert.equal(reply.status, 200);
    assert.equal(reply.body.openapi, '3.1.0');
    const api = await SwaggerParser.validate(JSON.parse(reply.text));
    assert.equal(api.info.title, 'Leadbook API');
  });

  test('describes every records route and field', async () => {
    const doc = JSON.parse((await app.get('/api/v1/openapi.json')).text);
    for (const resource of recordResources) {
      const base = `/api/v1/${resource.name}`;
      assert.deepEqual(Object.keys(doc.paths[base]).sort(), ['get', 'post']);
      assert.deepEqual(Object.keys(doc.paths[`${base}/{id}`]).sort(), ['delete', 'get', 'patch']);
      const fields = [...resource.visible.map((f) => f.name), ...Object.keys(resource.computed)];
      const record = Object.values(doc.components.schemas).find(
        (s: Json) => s.title === undefined && s.properties && Object.keys(s.properties).join() === fields.join(),
      ) as Json;
      assert.ok(record, `a component schema lists the ${resource.name} fields in order`);
      for (const f of resource.visible) {
        assert.equal(record.properties[f.name].title, f.label);
        if (f.max && f.kind.textual) assert.equal(record.properties[f.name].maxLength, f.max);
      }
      const listParams = doc.paths[base].get.parameters.map((p: { name: string }) => p.name);
      for (const name of ['search', 'filter', 'sort', 'page', 'per_page', 'cursor'])
        assert.ok(listParams.includes(name), `${base} documents ${name}`);
      const filter = doc.paths[base].get.parameters.find((p: { name: string }) => p.name === 'filter');
      assert.equal(filter.style, 'deepObject', 'filter[field][op]=value');
      assert.ok(doc.paths[base].post.responses['422'], 'validation failures are documented');
    }
    assert.ok(
      doc.paths['/api/v1/schema'] && doc.paths['/healthz'] && doc.paths['/readyz'],
      'schema and health are documented',
    );
    assert.ok(!JSON.stringify(doc).includes('two_factor_secret'), 'no hidden field in the document');
  });

  test('a readable reference is served at /docs', async () => {
    const reply = await app.get('/docs/');
    assert.equal(reply.status, 200);
    assert.match(reply.text, /<html/i);
    assert.match(reply.text, /swagger/i);
  });
});
