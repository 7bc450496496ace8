/**
 * Which failures of PostgreSQL the catalog reports as `UNAVAILABLE` (a dependency that is
 * down, 503) and which it leaves as they are (refused statements, lading's own errors).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { LadingError, isLadingError } from '../../src/core/errors.ts';
import { catalogError, isConnectionFailure } from '../../src/drivers/catalog/postgres/failures.ts';

const errno = (code: string, syscall = 'connect') => Object.assign(new Error(`${syscall} ${code} 127.0.0.1:5432`), { code, syscall });
const sqlstate = (code: string, message = 'server error') => Object.assign(new Error(message), { code, severity: 'FATAL' });

describe('connection failures of PostgreSQL', () => {
  it('are the socket errors of a server that is down, restarting or unreachable', () => {
    for (const code of ['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN']) {
      assert.ok(isConnectionFailure(errno(code)), code);
    }
    assert.ok(isConnectionFailure(errno('ENOENT')), 'a Unix socket whose file is gone');
    assert.ok(!isConnectionFailure(errno('ENOENT', 'open')), 'a missing file is no connection failure');
    assert.ok(isConnectionFailure(new AggregateError([errno('ECONNREFUSED'), errno('ECONNREFUSED')], '')), 'every address refused');
  });

  it('are the SQLSTATEs of a server that ends or refuses sessions', () => {
    for (const code of ['57P01', '57P02', '57P03', '57P05', '53300', '08000', '08001', '08003', '08006', '08P01']) {
      assert.ok(isConnectionFailure(sqlstate(code)), code);
    }
  });

  it('are pg\'s own errors of a connection that ended, timed out or broke', () => {
    for (const message of [
      'Connection terminated unexpectedly', 'Connection terminated', 'Connection terminated due to connection timeout',
      'timeout exceeded when trying to connect', 'Client has encountered a connection error and is not queryable',
      'Client was closed and is not queryable',
    ]) assert.ok(isConnectionFailure(new Error(message)), message);
    assert.ok(isConnectionFailure(new Error('wrapped', { cause: errno('ECONNRESET') })), 'through a cause');
  });

  it('are not refused statements or other errors', () => {
    for (const code of ['23505', '40001', '40P01', '42P01', '42501', '22P02', '57014', '53100']) {
      assert.ok(!isConnectionFailure(sqlstate(code)), code);
    }
    assert.ok(!isConnectionFailure(new Error('something else')));
    assert.ok(!isConnectionFailure(new AggregateError([errno('ECONNREFUSED'), new Error('other')], '')), 'not when one address failed otherwise');
    assert.ok(!isConnectionFailure(null));
    assert.ok(!isConnectionFailure('ECONNREFUSED'));
  });
});

describe('catalogError', () => {
  it('turns a connection failure into UNAVAILABLE with the failure as its cause, naming no server', () => {
    const cause = sqlstate('57P01', 'terminating connection due to administrator command');
    const err = catalogError(cause);
    assert.ok(isLadingError(err, 'UNAVAILABLE'));
    assert.equal(err.cause, cause);
    assert.deepEqual(err.details, {});
    assert.doesNotMatch(err.message, /127\.0\.0\.1|5432|administrator/);
    const commit = catalogError(errno('ECONNRESET', 'read'), { maybeCommitted: true });
    assert.ok(isLadingError(commit, 'UNAVAILABLE'));
    assert.equal(commit.details.maybeCommitted, true);
  });

  it('leaves other errors as they are, lading\'s own included', () => {
    const refused = sqlstate('23505');
    assert.equal(catalogError(refused), refused);
    const own = new LadingError('CONFLICT', 'It already exists.');
    assert.equal(catalogError(own), own);
  });
});
