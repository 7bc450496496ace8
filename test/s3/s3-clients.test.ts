/**
 * The S3 clients from Debian (aws-cli, s3cmd, rclone, boto3) against one lading node on the
 * embedded defaults (SQLite catalog, files on local disk), with the example PID rules, so
 * head-object shows a PID. The cases are in `s3-clients-suite.ts`.
 */
import { after, before } from 'node:test';
import { join } from 'node:path';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { s3ClientsSuite } from './s3-clients-suite.ts';

let server: TestServer;
let bearer: string;

before(async () => {
  server = await startTestServer({ 's3.listen': '127.0.0.1:0', zone: 'lading', 'pid.rules': join(import.meta.dirname, '..', '..', 'examples', 'rules.txt') });
  bearer = await server.bearer('alice');
});
after(async () => {
  await server?.stop();
});

s3ClientsSuite('embedded defaults, one node', () => ({ s3Urls: [server.s3Url!], apiUrl: server.url, bearer, pids: true }));
