/**
 * The WebDAV front's own promises, on a whole node: who may sign in and how (Basic with an API
 * token or a password, bearer; the Basic challenge only over TLS or from loopback), XML read
 * safely (no DOCTYPE, bounded size and depth), a PUT that is the API's commit (checksum,
 * OC-Checksum checked), DELETE to the trash, live properties (PID, checksum), protected ones
 * refused, locks honoured between users, and PROPFIND of depth infinity refused.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { startTestServer, json, type TestServer } from '../helpers/server.ts';

describe('the WebDAV front', () => {
  let s: TestServer;
  let alice: string;
  let bob: string;
  let dav: string;
  const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
  const req = (url: string, init: RequestInit & { auth?: string } = {}) =>
    fetch(url, { ...init, headers: { authorization: init.auth ?? basic('alice', alice), ...(init.headers as Record<string, string> | undefined) } });

  before(async () => {
    s = await startTestServer();
    await s.addUser('alice');
    await s.addUser('bob');
    alice = await s.login('alice');
    bob = await s.login('bob');
    dav = `${s.url}/dav/${s.zone}/home/alice`;
    // bob may write in alice's shared collection, to try her locks.
    await req(`${dav}/shared`, { method: 'MKCOL' });
    const grant = await fetch(`${s.url}/api/acl/${s.zone}/home/alice/shared`, {
      method: 'PUT', headers: { authorization: `Bearer ${alice}`, 'content-type': 'application/json' }, body: JSON.stringify({ principal: 'bob', level: 'write' }),
    });
    assert.ok(grant.ok, await grant.text());
  });
  after(async () => {
    await s?.stop();
  });

  it('signs in with Basic (user name and API token), a bearer token, or a local password; refuses the rest', async () => {
    assert.equal((await req(`${dav}/`, { method: 'PROPFIND', headers: { depth: '0' } })).status, 207);
    assert.equal((await req(`${dav}/`, { method: 'PROPFIND', headers: { depth: '0' }, auth: `Bearer ${alice}` })).status, 207);
    assert.equal((await req(`${dav}/`, { method: 'PROPFIND', headers: { depth: '0' }, auth: basic('alice', 'pw-alice') })).status, 207);
    assert.equal((await req(`${dav}/`, { method: 'PROPFIND', headers: { depth: '0' }, auth: basic('bob', alice) })).status, 401, 'a token is only its own user\'s');
    assert.equal((await req(`${dav}/`, { method: 'PROPFIND', headers: { depth: '0' }, auth: basic('alice', 'wrong') })).status, 401);
    const none = await fetch(`${dav}/`, { method: 'PROPFIND', headers: { depth: '0' } });
    assert.equal(none.status, 401);
    // The test client is on loopback: the Basic challenge is safe to send.
    assert.match(none.headers.get('www-authenticate') ?? '', /^Basic realm="lading WebDAV"/);
  });

  it('sends the Basic challenge over plain HTTP only from loopback, and behind a TLS proxy', async () => {
    const proxied = await startTestServer({ trust_proxy: true });
    try {
      const url = `${proxied.url}/dav/${proxied.zone}/`;
      const viaTls = await fetch(url, { method: 'PROPFIND', headers: { depth: '0', 'x-forwarded-proto': 'https', 'x-forwarded-for': '192.0.2.7' } });
      assert.match(viaTls.headers.get('www-authenticate') ?? '', /Basic/);
      const plain = await fetch(url, { method: 'PROPFIND', headers: { depth: '0', 'x-forwarded-proto': 'http', 'x-forwarded-for': '192.0.2.7' } });
      assert.equal(plain.status, 401);
      assert.doesNotMatch(plain.headers.get('www-authenticate') ?? '', /Basic/, 'no Basic challenge to a client across plain HTTP');
    } finally {
      await proxied.stop();
    }
  });

  it('reads request XML safely: no DOCTYPE, at most 1 MiB, at most 64 levels deep', async () => {
    const propfind = (body: string) => req(`${dav}/`, { method: 'PROPFIND', headers: { depth: '0', 'content-type': 'application/xml' }, body });
    const laughs = '<?xml version="1.0"?><!DOCTYPE d [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;">]><D:propfind xmlns:D="DAV:"><D:prop><D:displayname>&b;</D:displayname></D:prop></D:propfind>';
    assert.equal((await propfind(laughs)).status, 400);
    const external = '<?xml version="1.0"?><!DOCTYPE d [<!ENTITY x SYSTEM "file:///etc/passwd">]><D:propfind xmlns:D="DAV:"><D:prop>&x;</D:prop></D:propfind>';
    assert.equal((await propfind(external)).status, 400);
    assert.equal((await propfind(`<D:propfind xmlns:D="DAV:">${'<x>'.repeat(70)}${'</x>'.repeat(70)}</D:propfind>`)).status, 400);
    assert.equal((await propfind(`<D:propfind xmlns:D="DAV:"><D:prop>${' '.repeat(1024 * 1024)}</D:prop></D:propfind>`)).status, 413);
    assert.equal((await propfind('<D:propfind xmlns:D="DAV:"><x:y/></D:propfind>')).status, 400, 'an unbound prefix');
  });

  it('stores a PUT as the API does, checks OC-Checksum, and answers PID and checksum as properties', async () => {
    const body = 'hello over WebDAV\n';
    const put = await req(`${dav}/hello.txt`, { method: 'PUT', body });
    assert.equal(put.status, 201);
    const sha = createHash('sha256').update(body).digest();
    assert.equal(put.headers.get('etag'), `"${sha.toString('hex')}"`);
    const record = await json(await fetch(`${s.home('alice', 'hello.txt')}`, { headers: { authorization: `Bearer ${alice}` } }));
    assert.equal(record.Response.data[0]['hello.txt'].metadata.checksum, `sha2:${sha.toString('base64')}`);
    assert.equal((await req(`${dav}/hello.txt`, { method: 'PUT', body })).status, 204, 'an overwrite');
    const wrong = await req(`${dav}/bad.txt`, { method: 'PUT', body, headers: { 'oc-checksum': `MD5:${'0'.repeat(32)}` } });
    assert.equal(wrong.status, 400);
    assert.equal((await req(`${dav}/bad.txt`)).status, 404, 'nothing stored on a checksum mismatch');
    const md5 = createHash('md5').update(body).digest('hex');
    assert.equal((await req(`${dav}/good.txt`, { method: 'PUT', body, headers: { 'oc-checksum': `MD5:${md5}` } })).status, 201);
    const props = await req(`${dav}/hello.txt`, {
      method: 'PROPFIND', headers: { depth: '0' },
      body: '<D:propfind xmlns:D="DAV:" xmlns:L="urn:lading:webdav" xmlns:oc="http://owncloud.org/ns"><D:prop><L:checksum/><oc:checksums/><D:getcontentlength/><D:getetag/></D:prop></D:propfind>',
    });
    const text = await props.text();
    assert.equal(props.status, 207);
    assert.ok(text.includes(`sha2:${sha.toString('base64')}`), text);
    assert.ok(text.includes(`SHA256:${sha.toString('hex')}`), text);
    assert.ok(text.includes(`<D:getcontentlength>${Buffer.byteLength(body)}</D:getcontentlength>`), text);
    const got = await req(`${dav}/hello.txt`, { headers: { range: 'bytes=0-4' } });
    assert.equal(got.status, 206);
    assert.equal(await got.text(), 'hello');
  });

  it('refuses PROPFIND of depth infinity, and PROPPATCH of live properties (all or nothing)', async () => {
    const inf = await req(`${dav}/`, { method: 'PROPFIND' });
    assert.equal(inf.status, 403);
    assert.match(await inf.text(), /propfind-finite-depth/);
    const patch = await req(`${dav}/hello.txt`, {
      method: 'PROPPATCH',
      body: '<D:propertyupdate xmlns:D="DAV:" xmlns:L="urn:lading:webdav"><D:set><D:prop><L:pid>fake</L:pid><x xmlns="urn:t">1</x></D:prop></D:set></D:propertyupdate>',
    });
    const text = await patch.text();
    assert.equal(patch.status, 207);
    assert.match(text, /403 Forbidden/);
    assert.match(text, /424 Failed Dependency/);
    const meta = await (await fetch(`${s.url}/api/metadata/${s.zone}/home/alice/hello.txt`, { headers: { authorization: `Bearer ${alice}` } })).text();
    assert.doesNotMatch(meta, /urn:t/, 'nothing of a refused PROPPATCH is stored');
    const tooLong = await req(`${dav}/hello.txt`, {
      method: 'PROPPATCH',
      body: `<D:propertyupdate xmlns:D="DAV:"><D:set><D:prop><x xmlns="urn:t">1</x><y xmlns="urn:t">${'v'.repeat(3000)}</y></D:prop></D:set></D:propertyupdate>`,
    });
    const tooLongText = await tooLong.text();
    assert.match(tooLongText, /507 Insufficient Storage/);
    assert.match(tooLongText, /424 Failed Dependency/);
    const after = await (await fetch(`${s.url}/api/metadata/${s.zone}/home/alice/hello.txt`, { headers: { authorization: `Bearer ${alice}` } })).text();
    assert.doesNotMatch(after, /urn:t/, 'nothing of a PROPPATCH with a value over the limit is stored');
  });

  it('DELETE moves to the trash, where the API lists it and restores it', async () => {
    await req(`${dav}/doomed.txt`, { method: 'PUT', body: 'doomed' });
    assert.equal((await req(`${dav}/doomed.txt`, { method: 'DELETE' })).status, 204);
    assert.equal((await req(`${dav}/doomed.txt`)).status, 404);
    const trash = await json(await fetch(`${s.url}/api/trash`, { headers: { authorization: `Bearer ${alice}` } }));
    assert.ok(JSON.stringify(trash.Response.data).includes('doomed.txt'));
  });

  it('honours a lock: another user cannot write or lock under it; the owner writes with its token; UNLOCK frees it', async () => {
    await req(`${dav}/shared/doc.txt`, { method: 'PUT', body: 'v1' });
    const lockBody = '<D:lockinfo xmlns:D="DAV:"><D:lockscope><D:exclusive/></D:lockscope><D:locktype><D:write/></D:locktype><D:owner>alice</D:owner></D:lockinfo>';
    const lock = await req(`${dav}/shared/`, { method: 'LOCK', body: lockBody, headers: { depth: 'infinity', timeout: 'Second-600' } });
    assert.equal(lock.status, 200, await lock.clone().text());
    const token = /^<(.+)>$/.exec(lock.headers.get('lock-token') ?? '')![1]!;
    assert.match(await lock.text(), /<D:timeout>Second-(600|599)<\/D:timeout>/);
    const asBob = { auth: basic('bob', bob) };
    assert.equal((await req(`${dav}/shared/doc.txt`, { method: 'PUT', body: 'bob', ...asBob })).status, 423);
    assert.equal((await req(`${dav}/shared/doc.txt`, { method: 'PUT', body: 'bob', headers: { if: `(<${token}>)` }, ...asBob })).status, 423, 'a token is only its owner\'s');
    assert.equal((await req(`${dav}/shared/new.txt`, { method: 'PUT', body: 'bob', ...asBob })).status, 423, 'no new member under a depth-infinity lock');
    assert.equal((await req(`${dav}/shared/doc.txt`, { method: 'LOCK', body: lockBody, ...asBob })).status, 423);
    assert.equal((await req(`${dav}/shared/doc.txt`, { method: 'PUT', body: 'v2' })).status, 423, 'the owner too must send the token');
    assert.equal((await req(`${dav}/shared/doc.txt`, { method: 'PUT', body: 'v2', headers: { if: `(<${token}>)` } })).status, 204);
    // The lock is in the catalog: the API's view of the namespace is not changed by it, but every WebDAV method honours it.
    assert.equal((await s.deps.catalog.locksAt(`/${s.zone}/home/alice/shared` as never, new Date())).length, 1);
    assert.equal((await req(`${dav}/shared/`, { method: 'UNLOCK', headers: { 'lock-token': `<${token}>` } })).status, 204);
    assert.equal((await req(`${dav}/shared/doc.txt`, { method: 'PUT', body: 'bob', ...asBob })).status, 204);
  });

  it('answers OPTIONS with the DAV classes and MS-Author-Via', async () => {
    const res = await fetch(`${dav}/`, { method: 'OPTIONS' });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('dav'), '1, 2');
    assert.equal(res.headers.get('ms-author-via'), 'DAV');
    assert.match(res.headers.get('allow') ?? '', /PROPFIND/);
    const root = await fetch(`${s.url}/`, { method: 'OPTIONS' });
    assert.equal(root.status, 200);
    assert.equal(root.headers.get('dav'), '1, 2', 'Windows asks the server\'s root first');
  });
});
