import { beforeEach, describe, expect, it } from 'vitest';
import { RouteTable } from '../../../src/http/route-table.js';

describe('RouteTable', () => {
  let routes: RouteTable;

  beforeEach(() => {
    routes = new RouteTable();
    routes.add('GET', '/v1/pets');
    routes.add(['GET', 'HEAD'], '/v1/pets/:petId');
    routes.add('POST', '/v1/pets');
    routes.add('GET', '/docs/*');
  });

  it('lists every method registered for a static path, sorted', () => {
    expect(routes.allowedMethods('/v1/pets')).toEqual(['GET', 'POST']);
  });

  it('matches a path parameter against one segment', () => {
    expect(routes.allowedMethods('/v1/pets/123')).toEqual(['GET', 'HEAD']);
  });

  it('does not let a path parameter span segments', () => {
    expect(routes.allowedMethods('/v1/pets/123/x')).toEqual([]);
  });

  it('does not match an empty path parameter', () => {
    expect(routes.allowedMethods('/v1/pets/')).toEqual([]);
  });

  it('matches a wildcard against the rest of the path', () => {
    expect(routes.allowedMethods('/docs/swagger-ui.css')).toEqual(['GET']);
    expect(routes.allowedMethods('/docs/a/b/c.js')).toEqual(['GET']);
  });

  it('returns [] for an unknown path', () => {
    expect(routes.allowedMethods('/v2/pets')).toEqual([]);
    expect(routes.allowedMethods('/')).toEqual([]);
  });

  it('anchors patterns at both ends', () => {
    expect(routes.allowedMethods('/api/v1/pets')).toEqual([]);
    expect(routes.allowedMethods('/v1/petsX')).toEqual([]);
  });

  it('lists a method once even when registered twice', () => {
    routes.add('GET', '/v1/pets');
    expect(routes.allowedMethods('/v1/pets')).toEqual(['GET', 'POST']);
  });

  it('starts empty', () => {
    expect(new RouteTable().allowedMethods('/v1/pets')).toEqual([]);
  });

  it('treats regex metacharacters in a path literally', () => {
    const table = new RouteTable();
    table.add('GET', '/a.b');
    table.add('GET', '/c+d');
    table.add('GET', '/(e)');
    expect(table.allowedMethods('/a.b')).toEqual(['GET']);
    expect(table.allowedMethods('/aXb')).toEqual([]);
    expect(table.allowedMethods('/ccd')).toEqual([]);
    expect(table.allowedMethods('/(e)')).toEqual(['GET']);
    expect(table.allowedMethods('/e')).toEqual([]);
  });
});
