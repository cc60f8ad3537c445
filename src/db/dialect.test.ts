import assert from 'node:assert/strict';
import { test } from 'node:test';
import { mysqlServerRefusal } from './dialect.ts';

test('a mysql:// server is taken when it is MariaDB 10.5 or later, and refused by name otherwise', () => {
  for (const version of [
    '10.11.19-MariaDB-0+deb12u1',
    '10.5.0-MariaDB',
    '11.4.2-MariaDB-ubu2404',
    '5.5.5-10.11.6-MariaDB',
  ])
    assert.equal(mysqlServerRefusal(version), null, version);
  assert.match(mysqlServerRefusal('8.0.36')!, /MySQL 8\.0\.36.*MariaDB 10\.5 or later/);
  assert.match(mysqlServerRefusal('8.4.0-commercial')!, /MySQL/);
  assert.match(mysqlServerRefusal('10.4.32-MariaDB')!, /MariaDB 10\.4\.32.*10\.5 or later/);
});
