/**
 * The proxy credential manager remembers opened credentials: a session's every request opens
 * the same sealed value, which is unsealed once. What it remembers is the public chain only.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { systemClock } from '../../src/core/ports.ts';
import { createSealer, type Sealer } from '../../src/identity/secrets/sealing.ts';
import { createLocalIssuer } from '../../src/identity/x509/issuer-local.ts';
import { createProxyCredentials } from '../../src/identity/x509/proxy-credentials.ts';
import { testCa } from './pki.ts';

describe('proxy credential cache', () => {
  it('unseals a stored credential once and hands out only its public chain', async () => {
    const ca = await testCa('tz', new Date(Date.now() - 60_000));
    const real = createSealer(Buffer.alloc(32, 3));
    let opens = 0;
    const sealer: Sealer = { seal: real.seal, open: (sealed, purpose) => { opens++; return real.open(sealed, purpose); } };
    const credentials = createProxyCredentials({
      issuer: createLocalIssuer({ ca, clock: systemClock, lifetimeSeconds: 3600 }), sealer,
      catalog: { mapSubject: async () => {} }, proxyLifetimeSeconds: 3600, cacheSize: 2,
    });
    const [a, b, c] = await Promise.all(['alice', 'bob', 'carol'].map((u) => credentials.issue(u, new Date())));
    const first = await credentials.open(a!);
    for (let i = 0; i < 4; i++) assert.deepEqual(await credentials.open(a!), first);
    assert.equal(opens, 1);
    assert.doesNotMatch(JSON.stringify(first), /PRIVATE KEY/);
    // Bounded: with room for two, opening two others pushes the first out.
    await credentials.open(b!);
    await credentials.open(c!);
    assert.equal(opens, 3);
    await credentials.open(a!);
    assert.equal(opens, 4);
  });
});
