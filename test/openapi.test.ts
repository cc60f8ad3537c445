// The OpenAPI document is generated from the same schemas the routes use, and
// an independent validator must accept it.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
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

  test('passes @redocly/cli lint with its recommended rules: no error, no warning', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'leadbook-redocly-'));
    try {
      fs.writeFileSync(path.join(dir, 'openapi.json'), (await app.get('/api/v1/openapi.json')).text);
      fs.copyFileSync(
        new URL('helpers/redocly-lint-ignore.yaml', import.meta.url),
        path.join(dir, '.redocly.lint-ignore.yaml'),
      );
      const cli = new URL('../node_modules/@redocly/cli/bin/cli.js', import.meta.url);
      const run = spawnSync(process.execPath, [cli.pathname, 'lint', 'openapi.json', '--format=json'], {
        cwd: dir,
        encoding: 'utf8',
        env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
      });
      const report = JSON.parse(run.stdout) as { totals: Record<string, number>; problems: Json[] };
      const problems = report.problems.map((p) => `${p.ruleId}: ${p.message} at ${JSON.stringify(p.location)}`);
      assert.deepEqual(problems, [], 'no problem');
      assert.deepEqual(report.totals, { errors: 0, warnings: 0, ignored: 2 }, 'only the health checks’ 4xx, ignored');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  test('every operation has an operationId of its own', async () => {
    const doc = JSON.parse((await app.get('/api/v1/openapi.json')).text);
    const ids = Object.values(doc.paths).flatMap((item) =>
      Object.values(item as Json).map((op: Json) => op.operationId),
    );
    assert.ok(
      ids.every((id) => typeof id === 'string' && /^[a-z][A-Za-z0-9]*$/.test(id)),
      ids.join(' '),
    );
    assert.equal(new Set(ids).size, ids.length, 'unique');
    assert.equal(doc.paths['/api/v1/imports/{id}/rollback'].post.operationId, 'postImportsByIdRollback');
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
