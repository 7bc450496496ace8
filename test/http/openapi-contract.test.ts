/**
 * The OpenAPI document at /api/specs says what the server does: servers and described tags,
 * every operation with its success responses and their content types, every 4xx its route can
 * give, a request body where the route reads one, HEAD without a body, the refused characters
 * of the path parameter, and links that chain create → read → rename. A fuzzer that checks
 * answers against the document relies on all of it.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from '../helpers/server.ts';

interface Response { description?: string; content?: Record<string, { schema?: unknown }>; links?: Record<string, { operationId?: string; parameters?: Record<string, string> }> }
interface Operation {
  operationId?: string; tags?: string[]; summary?: string; description?: string;
  parameters?: { name: string; in: string; description?: string }[];
  requestBody?: { content: Record<string, unknown> };
  responses: Record<string, Response>;
}
interface Document {
  openapi: string;
  servers?: { url: string }[];
  tags?: { name: string; description?: string }[];
  paths: Record<string, Record<string, Operation>>;
}

/** Every operation, and the 4xx statuses the route behind it can give (each route: 400 for a bad Host). */
const ERRORS: Record<string, number[]> = {
  'GET /api/status': [400, 408, 431],
  'GET /api/ready': [400, 408, 431],
  'POST /auth/login': [400, 401, 408, 413, 415, 429, 431],
  'POST /auth/b2safeproxy': [400, 401, 408, 413, 415, 429, 431],
  'GET /auth/b2safeproxy': [400, 401, 408, 431],
  'POST /auth/proxy': [400, 401, 403, 408, 431],
  'GET /auth/proxy': [400, 401, 408, 431],
  'GET /auth/clients/cli': [400, 408, 431],
  'POST /auth/exchange': [400, 401, 403, 408, 413, 415, 431],
  'POST /auth/logout': [400, 401, 403, 408, 431],
  'GET /auth/signin': [400, 408, 431],
  'GET /auth/session': [400, 401, 408, 431],
  'POST /auth/signout': [400, 401, 403, 408, 431],
  'GET /auth/tokens': [400, 401, 408, 431],
  'POST /auth/tokens': [400, 401, 403, 408, 413, 415, 431],
  'DELETE /auth/tokens/{id}': [400, 401, 403, 404, 408, 431],
  'GET /api/s3/keys': [400, 401, 408, 431],
  'GET /api/quota': [400, 401, 403, 404, 408, 431],
  'GET /api/admin/audit': [400, 401, 403, 408, 431],
  'POST /api/s3/keys': [400, 401, 403, 408, 413, 415, 429, 431],
  'DELETE /api/s3/keys/{id}': [400, 401, 403, 404, 408, 431],
  'GET /api/registered': [400, 401, 403, 404, 408, 431],
  'HEAD /api/registered': [400, 401, 403, 404, 408, 431],
  'POST /api/registered': [400, 401, 403, 404, 408, 409, 413, 415, 431],
  'POST /api/archive': [400, 401, 403, 404, 408, 413, 415, 429, 431],
  'POST /api/registered/{*}': [400, 401, 403, 404, 408, 409, 413, 415, 431],
  'DELETE /api/registered': [400, 401, 403, 405, 408, 431],
  'GET /api/registered/{*}': [400, 401, 403, 404, 408, 412, 413, 416, 429, 431],
  'HEAD /api/registered/{*}': [400, 401, 403, 404, 408, 412, 413, 416, 429, 431],
  'PUT /api/registered/{*}': [400, 401, 403, 404, 408, 409, 413, 415, 431],
  'PATCH /api/registered/{*}': [400, 401, 403, 404, 408, 409, 413, 415, 431],
  'DELETE /api/registered/{*}': [400, 401, 403, 405, 408, 431],
  'GET /api/pids/{*}': [400, 401, 403, 404, 408, 410, 412, 416, 431],
  'HEAD /api/pids/{*}': [400, 401, 403, 404, 408, 410, 412, 416, 431],
  'GET /api/handles/{*}': [400, 404, 408, 431],
  'GET /api/access/shared-with-me': [400, 401, 408, 431],
  'GET /api/acl/{*}': [400, 401, 403, 404, 408, 431],
  'PUT /api/acl/{*}': [400, 401, 403, 404, 408, 409, 413, 415, 431],
  'DELETE /api/acl/{*}': [400, 401, 403, 404, 408, 409, 431],
  'GET /api/metadata/{*}': [400, 401, 403, 404, 408, 431],
  'POST /api/metadata/{*}': [400, 401, 403, 404, 408, 413, 415, 431],
  'DELETE /api/metadata/{*}': [400, 401, 403, 404, 408, 431],
  'GET /api/publish/{*}': [400, 401, 403, 404, 408, 431],
  'PUT /api/publish/{*}': [400, 401, 403, 404, 408, 431],
  'DELETE /api/publish/{*}': [400, 401, 403, 404, 408, 409, 431],
  'GET /api/public/{*}': [400, 404, 408, 412, 413, 416, 429, 431],
  'HEAD /api/public/{*}': [400, 404, 408, 412, 413, 416, 429, 431],
  'GET /auth/askauth': [400, 408, 431],
  'GET /auth/callback': [400, 401, 403, 408, 431],
  'POST /ca/certificate': [400, 401, 408, 413, 415, 431],
  'GET /ca/cacert.pem': [400, 408, 431],
  'GET /favicon.svg': [400, 408, 431],
  'POST /api/shares': [400, 401, 403, 404, 408, 413, 415, 429, 431],
  'GET /api/shares': [400, 401, 403, 404, 408, 431],
  'DELETE /api/shares/{id}': [400, 401, 403, 404, 408, 414, 431],
  'PATCH /api/shares/{id}': [400, 401, 403, 404, 408, 413, 414, 415, 429, 431],
  'POST /api/trash': [400, 401, 403, 404, 408, 413, 415, 431],
  'GET /api/trash': [400, 401, 403, 408, 431],
  'GET /api/search': [400, 401, 403, 404, 408, 431],
  'GET /api/recent': [400, 401, 403, 408, 431],
  'DELETE /api/trash': [400, 401, 403, 408, 431],
  'GET /api/trash/{id}': [400, 401, 403, 404, 408, 431],
  'DELETE /api/trash/{id}': [400, 401, 403, 404, 408, 409, 431],
  'POST /api/trash/{id}/restore': [400, 401, 403, 404, 408, 409, 413, 415, 431],
  'GET /api/shared/{token}': [400, 401, 403, 404, 408, 410, 412, 413, 414, 416, 429, 431],
  'HEAD /api/shared/{token}': [400, 401, 403, 404, 408, 410, 412, 413, 414, 416, 429, 431],
  'POST /api/shared/{token}': [400, 401, 403, 404, 408, 409, 410, 413, 414, 415, 429, 431],
  'POST /api/shared/{token}/password': [400, 401, 403, 404, 408, 410, 414, 415, 429, 431],
  'GET /api/shared/{token}/{*}': [400, 401, 403, 404, 408, 410, 412, 413, 414, 416, 429, 431],
  'HEAD /api/shared/{token}/{*}': [400, 401, 403, 404, 408, 410, 412, 413, 414, 416, 429, 431],
  'PUT /api/shared/{token}/{*}': [400, 401, 403, 404, 408, 409, 410, 413, 414, 415, 429, 431],
  'OPTIONS /api/uploads': [400, 408, 431],
  'POST /api/uploads': [400, 401, 403, 404, 408, 409, 412, 413, 415, 429, 431, 460],
  'GET /api/uploads': [400, 401, 408, 431],
  'HEAD /api/uploads/{id}': [400, 401, 404, 408, 412, 431],
  'PATCH /api/uploads/{id}': [400, 401, 403, 404, 408, 409, 412, 413, 415, 431, 460],
  'DELETE /api/uploads/{id}': [400, 401, 403, 404, 408, 409, 412, 431],
  'GET /api/uploads/{id}': [400, 401, 404, 408, 431],
  'GET /': [400, 408, 431],
  'GET /app/{file}': [400, 404, 408, 431],
};

/** Operations that read a request body, and the media types they take. */
const BODIES: Record<string, string[]> = {
  'POST /auth/login': ['application/json', 'application/x-www-form-urlencoded'],
  'POST /auth/exchange': ['application/json'],
  'POST /auth/b2safeproxy': ['application/json', 'application/x-www-form-urlencoded'],
  'POST /api/registered': ['application/json'],
  'POST /api/archive': ['application/json', 'application/x-www-form-urlencoded'],
  'POST /api/registered/{*}': ['application/json'],
  'PUT /api/registered/{*}': ['application/octet-stream', 'multipart/form-data'],
  'PATCH /api/registered/{*}': ['application/json'],
  'PUT /api/acl/{*}': ['application/json'],
  'POST /api/metadata/{*}': ['application/json'],
  'POST /ca/certificate': ['application/pkcs10', 'application/x-pem-file'],
  'POST /api/shares': ['application/json'],
  'PATCH /api/shares/{id}': ['application/json'],
  'POST /api/trash': ['application/json'],
  'POST /api/trash/{id}/restore': ['application/json'],
  'POST /auth/tokens': ['application/json'],
  'POST /api/s3/keys': ['application/json'],
  'POST /api/shared/{token}': ['multipart/form-data'],
  'POST /api/shared/{token}/password': ['application/json'],
  'PUT /api/shared/{token}/{*}': ['application/octet-stream'],
  'POST /api/uploads': ['application/offset+octet-stream'],
  'PATCH /api/uploads/{id}': ['application/offset+octet-stream'],
};

/** Error statuses whose answer is also an HTML page (to a client that prefers HTML). */
const HTML_ERRORS: Record<string, number[]> = {
  'GET /api/pids/{*}': [404],
  'GET /api/shared/{token}': [401, 403, 404, 410, 429],
  'GET /api/shared/{token}/{*}': [401, 403, 404, 410, 429],
  'GET /auth/signin': [400],
  'GET /auth/callback': [400, 401, 403],
};

/** Success content types where they are not only JSON. */
const SUCCESS_TYPES: Record<string, Record<string, string[]>> = {
  'GET /api/registered/{*}': { 200: ['application/json', 'application/octet-stream', 'application/zip'], 206: ['application/octet-stream'] },
  'POST /api/archive': { 200: ['application/zip'] },
  'GET /api/pids/{*}': { 200: ['application/json', 'application/octet-stream', 'text/html'], 206: ['application/octet-stream'] },
  'GET /api/public/{*}': { 200: ['application/json', 'application/octet-stream', 'application/zip', 'text/html'], 206: ['application/octet-stream'] },
  'POST /ca/certificate': { 200: ['application/x-pem-file'] },
  'GET /ca/cacert.pem': { 200: ['application/x-pem-file'] },
  'GET /favicon.svg': { 200: ['image/svg+xml'] },
  'GET /api/shared/{token}': { 200: ['application/json', 'application/octet-stream', 'application/zip', 'text/html'], 206: ['application/octet-stream'] },
  'GET /api/shared/{token}/{*}': { 200: ['application/json', 'application/octet-stream', 'application/zip', 'text/html'], 206: ['application/octet-stream'] },
  'GET /': { 200: ['text/html'] },
  'GET /app/{file}': { 200: ['text/css', 'text/javascript'] },
  'POST /api/uploads': { 201: ['application/json'] },
  'POST /auth/tokens': { 201: ['application/json'] },
  'POST /api/s3/keys': { 201: ['application/json'] },
  'OPTIONS /api/uploads': { 204: [] },
  'PATCH /api/uploads/{id}': { 204: [] },
  'DELETE /api/uploads/{id}': { 204: [] },
};

describe('the OpenAPI document', () => {
  let s: TestServer;
  let doc: Document;
  const operations = () => Object.entries(doc.paths).flatMap(([path, item]) => Object.entries(item).map(([method, op]) => [`${method.toUpperCase()} ${path}`, op] as const));

  before(async () => {
    s = await startTestServer();
    doc = await (await fetch(`${s.url}/api/specs`)).json() as Document;
  });
  after(() => s.stop());

  it('names its server and describes every tag its operations use', () => {
    assert.deepEqual(doc.servers, [{ url: s.url }]);
    const declared = new Map((doc.tags ?? []).map((t) => [t.name, t.description]));
    for (const [name, op] of operations()) {
      assert.ok(op.tags && op.tags.length > 0, `${name} has a tag`);
      for (const tag of op.tags) assert.ok(declared.get(tag), `${name}: tag '${tag}' is declared with a description`);
    }
  });

  it('has exactly the operations the server answers', () => {
    assert.deepEqual(operations().map(([name]) => name).sort(), Object.keys(ERRORS).sort());
  });

  it('gives each operation a success answer with its content types (HEAD and 204 without a body, DELETE in registered none)', () => {
    for (const [name, op] of operations()) {
      const successes = Object.entries(op.responses).filter(([status]) => /^[23]/.test(status));
      if (name.startsWith('DELETE /api/registered')) {
        assert.deepEqual(successes, [], `${name} is always refused`);
        continue;
      }
      assert.ok(successes.length > 0, `${name} documents a success`);
      if (name.startsWith('HEAD ')) {
        for (const [status, response] of Object.entries(op.responses)) assert.equal(response.content, undefined, `${name} ${status} has no body`);
        continue;
      }
      const twoHundreds = successes.filter(([status]) => status.startsWith('2'));
      if (name === 'GET /auth/askauth' || name === 'GET /auth/signin') {
        assert.ok(op.responses['302'], 'a redirect');
        continue;
      }
      assert.ok(twoHundreds.length > 0, `${name} documents a 2xx`);
      for (const [status, response] of twoHundreds) {
        const types = Object.keys(response.content ?? {}).sort();
        assert.deepEqual(types, (SUCCESS_TYPES[name]?.[status] ?? ['application/json']).sort(), `${name} ${status}`);
      }
    }
  });

  it('lists every 4xx a route can give, each as the JSON error envelope (or the Handle shape), and 5xx', () => {
    for (const [name, op] of operations()) {
      const documented = Object.keys(op.responses).filter((status) => status.startsWith('4'));
      assert.ok(!documented.includes('4XX'), `${name} names its 4xx statuses instead of a range`);
      assert.deepEqual(documented.map(Number).sort(), ERRORS[name], name);
      assert.ok(op.responses['5XX'], `${name} documents 5xx`);
      if (name.startsWith('HEAD ')) continue;
      for (const status of documented) {
        const types = HTML_ERRORS[name]?.includes(Number(status)) ? ['application/json', 'text/html'] : ['application/json'];
        assert.deepEqual(Object.keys(op.responses[status]!.content ?? {}), types, `${name} ${status} is JSON`);
      }
    }
  });

  it('documents a request body where the route reads one, and none elsewhere', () => {
    for (const [name, op] of operations()) {
      const types = Object.keys(op.requestBody?.content ?? {}).sort();
      assert.deepEqual(types, (BODIES[name] ?? []).sort(), name);
    }
  });

  it('says which characters the registered path refuses, and that download on a collection is a 400', () => {
    const get = doc.paths['/api/registered/{*}']!.get!;
    const param = get.parameters?.find((p) => p.in === 'path' && p.name === '*');
    assert.ok(param?.description, 'the path parameter is described');
    for (const text of ['U+0000–U+001F', 'U+007F–U+009F', 'U+2028', 'U+202E', 'U+2066–U+2069', 'U+FEFF', '..']) assert.ok(param.description.includes(text), text);
    assert.match(get.description ?? '', /collection.*400/);
  });

  it('gives the access, metadata and publishing operations examples of their bodies and answers', () => {
    const withBody = ['PUT /api/acl/{*}', 'POST /api/metadata/{*}'];
    for (const name of [...withBody, 'GET /api/access/shared-with-me', 'GET /api/acl/{*}', 'DELETE /api/acl/{*}', 'GET /api/metadata/{*}', 'DELETE /api/metadata/{*}', 'GET /api/publish/{*}', 'PUT /api/publish/{*}', 'DELETE /api/publish/{*}']) {
      const [method, path] = name.split(' ') as [string, string];
      const op = doc.paths[path]![method.toLowerCase()]! as Operation & { requestBody?: { content: Record<string, { examples?: Record<string, unknown> }> } };
      if (withBody.includes(name)) assert.ok(Object.keys(op.requestBody?.content['application/json']?.examples ?? {}).length > 0, `${name} has request examples`);
      const data = (op.responses['200']!.content!['application/json']!.schema as { properties: { Response: { properties: { data: { examples?: unknown[] } } } } }).properties.Response.properties.data;
      assert.ok((data.examples ?? []).length > 0, `${name} has an example answer`);
    }
  });

  it('links create and upload answers to reading and renaming what they made', () => {
    const ids = new Set(operations().map(([, op]) => op.operationId).filter(Boolean));
    assert.equal(ids.size, operations().filter(([, op]) => op.operationId).length, 'operation ids are unique');
    for (const name of ['PUT /api/registered/{*}', 'POST /api/registered', 'PATCH /api/registered/{*}']) {
      const [method, path] = name.split(' ') as [string, string];
      const links = doc.paths[path]![method.toLowerCase()]!.responses['200']!.links ?? {};
      const targets = Object.values(links).map((l) => l.operationId);
      assert.ok(targets.includes('getRegistered') && targets.includes('renameRegistered'), `${name} links to read and rename: ${JSON.stringify(links)}`);
      for (const link of Object.values(links)) {
        assert.ok(ids.has(link.operationId), `${name}: ${link.operationId} exists`);
        assert.ok(link.parameters?.['*'], `${name}: the link fills the path`);
      }
    }
  });
});
